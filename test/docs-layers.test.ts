/**
 * The layer rules are one table: LAYERS in .dependency-cruiser.mjs, from which `npm run lint`'s
 * rules are made, and the table of docs/design.md ("The layers, checked") must be the same rows.
 * And the rules catch what they are for, on a small tree of their own: an import against the
 * table, a value import where only types are allowed, and a circle of type-only imports.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { cruise, type IConfiguration, type ICruiseResult } from 'dependency-cruiser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

interface Layer {
  folder: string;
  is: string;
  mayImport: string[];
}

interface RulesFile {
  LAYERS: Layer[];
  default: IConfiguration;
}

// A path the type checker does not follow: the rules file is plain JavaScript for dependency-cruiser.
const rulesFile = (await import(pathToFileURL(path.join(ROOT, '.dependency-cruiser.mjs')).href)) as RulesFile;

/** The rows of the table under "The layers, checked" in docs/design.md, as LAYERS writes them. */
function designTable(): Layer[] {
  const design = readFileSync(path.join(ROOT, 'docs/design.md'), 'utf8');
  const section = design.slice(design.indexOf('### The layers, checked'));
  const lines = section.split('\n');
  // The formatter pads the table's cells; the cells are compared without it.
  const header = lines.findIndex((line) => /^\|\s*Folder\s*\|/.test(line));
  const rows: Layer[] = [];
  for (const line of lines.slice(header + 2)) {
    if (!line.startsWith('|')) break;
    const [folder = '', is = '', mayImport = ''] = line
      .slice(1, -1)
      .split('|')
      .map((cell) => cell.trim());
    rows.push({
      folder: folder.replace(/^`src\/(.+)`$/, '$1'),
      is,
      mayImport: mayImport === '—' ? [] : mayImport.split(/,\s*/),
    });
  }
  return rows;
}

describe('the layer table', () => {
  it('docs/design.md shows the table the lint rules are made from, row for row', () => {
    expect(designTable()).toEqual(rulesFile.LAYERS);
  });

  it('has a row for every folder of src/, and rows name only folders of the table', () => {
    const folders = rulesFile.LAYERS.map((layer) => layer.folder);
    const onDisk = readdirFolders(path.join(ROOT, 'src'));
    expect([...folders].sort()).toEqual(onDisk.sort());
    for (const layer of rulesFile.LAYERS) {
      for (const entry of layer.mayImport) expect(folders).toContain(entry.replace(/ \(types\)$/, ''));
    }
  });

  it('lists each folder below every folder that imports it', () => {
    const order = rulesFile.LAYERS.map((layer) => layer.folder);
    for (const layer of rulesFile.LAYERS) {
      for (const entry of layer.mayImport) {
        const imported = entry.replace(/ \(types\)$/, '');
        expect(order.indexOf(imported), `${layer.folder} → ${imported}`).toBeLessThan(order.indexOf(layer.folder));
      }
    }
  });
});

function readdirFolders(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name);
}

describe('the rules made from it', () => {
  let tree: string;

  /** Writes files of a small tree of its own. */
  function write(files: Record<string, string>): void {
    for (const [file, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(tree, file)), { recursive: true });
      writeFileSync(path.join(tree, file), text);
    }
  }

  beforeAll(() => {
    tree = mkdtempSync(path.join(os.tmpdir(), 'layers-'));
    write({
      // config imports a feature folder: against the table.
      'src/config/config.ts': "import { LIMIT } from '../avatars/limit.js';\nexport const SETTING = LIMIT;\n",
      'src/avatars/limit.ts': 'export const LIMIT = 1;\n',
      // rest may read edge's types, not its values.
      'src/edge/caching.ts': 'export class Caching {}\nexport type Tag = string;\n',
      'src/rest/types.ts': "import type { Tag } from '../edge/caching.js';\nexport const tag: Tag = 'a';\n",
      'src/rest/values.ts': "import { Caching } from '../edge/caching.js';\nexport const caching = new Caching();\n",
      // A circle of type-only imports.
      'src/db/handle.ts': "import type { Status } from './replicas.js';\nexport type Handle = { status: Status };\n",
      'src/db/replicas.ts': "import type { Handle } from './handle.js';\nexport type Status = { handle?: Handle };\n",
    });
  });

  afterAll(() => rmSync(tree, { recursive: true, force: true }));

  it('fail on an import against the table, a value where types are allowed, and a type-only circle', async () => {
    const { options = {}, ...ruleSet } = rulesFile.default;
    const { output } = await cruise(
      ['src'],
      { ...options, baseDir: tree, validate: true, ruleSet } as Parameters<typeof cruise>[1],
      { extensions: ['.ts', '.js'] },
    );
    const result = output as ICruiseResult;
    const violations = result.summary.violations.map((violation) => `${violation.rule.name}: ${violation.from}`);
    expect(violations.sort()).toEqual(
      [
        'layers-config: src/config/config.ts',
        'layers-rest-types-only: src/rest/values.ts',
        // A circle is reported once, from the module the cruise reaches first.
        'no-circular: src/db/handle.ts',
      ].sort(),
    );
  });
});
