/**
 * The documentation is complete in a clone: every relative link of the repository's Markdown
 * (README.md, docs/, bench/, the READMEs under src/) points to a file of the repository, and to a
 * heading that exists where it names one; no page sends the reader to a file outside the
 * repository. And docs/contract.md stays true where it can be checked against the code: its
 * example is the oracle the demo data is tested against, every error message the service writes
 * is stated there, and every setting it names is read by the code and listed in the README.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { IMAGE_OUTCOMES } from '../src/avatars/avatar-images.js';
import { EXPECTED_JSON_MESSAGE, INVALID_JSON_BODY_MESSAGE } from '../src/http/json-body.js';
import { requestBodyTooLargeMessage } from '../src/http/request-body.js';
import { tooManyRequestsMessage } from '../src/limits/rate-limit.js';
import { INVALID_EMAIL_MESSAGE } from '../src/names/email.js';
import { INVALID_NAME_MESSAGE } from '../src/names/name-id.js';
import { MAX_BATCH_BODY_BYTES, NAMES_REQUIRED_MESSAGE } from '../src/rest/batch.js';
import {
  INVALID_FALLBACK_MESSAGE,
  INVALID_FORMAT_MESSAGE,
  INVALID_SIZE_MESSAGE,
  NO_AVATAR_MESSAGE,
  PROFILE_NOT_FOUND_MESSAGE,
} from '../src/service/avatars.js';
import { INVALID_CURSOR_MESSAGE } from '../src/service/cursors.js';
import {
  INVALID_ADDRESS_MESSAGE,
  INVALID_NAMESPACE_MESSAGE,
  INVALID_PAGE_SIZE_MESSAGE,
  INVALID_PREFIX_MESSAGE,
  MISSING_PREFIX_MESSAGE,
} from '../src/service/discovery.js';
import { INTERNAL_SERVER_ERROR_MESSAGE, SERVICE_UNAVAILABLE_MESSAGE } from '../src/service/errors.js';
import { NO_NAMES_MESSAGE } from '../src/service/live-updates.js';
import { MISSING_PARAMETERS_MESSAGE, TOO_MANY_NAMES_MESSAGE } from '../src/service/profiles-service.js';
import { INVALID_RESOURCE_MESSAGE, RESOURCE_REQUIRED_MESSAGE } from '../src/service/webfinger.js';
import {
  API_KEY_REQUIRED_MESSAGE,
  TOO_MANY_WEBHOOKS_MESSAGE,
  WEBHOOK_NOT_FOUND_MESSAGE,
} from '../src/service/webhooks.js';
import { CONTRACT_EXAMPLE } from './support/contract-example.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Folders that hold no documentation of the project (dependencies, build output, run data). */
const NOT_DOCS = new Set(['node_modules', '.git', 'dist', '.data', 'test-results', 'coverage']);

function markdownFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(folder, entry.name);
    if (entry.isDirectory()) return NOT_DOCS.has(entry.name) ? [] : markdownFiles(full);
    return entry.isFile() && entry.name.endsWith('.md') ? [full] : [];
  });
}

/** The text Markdown renders as prose: fenced code blocks and inline code spans blanked out. */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '``');
}

/** Link targets: inline links and images `[text](target)` and reference definitions `[x]: target`. */
function linkTargets(markdown: string): string[] {
  const text = prose(markdown);
  const inline = [...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((match) => match[1] ?? '');
  const references = [...text.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)].map((match) => match[1] ?? '');
  return [...inline, ...references];
}

/** The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces as hyphens. */
function headingAnchors(markdown: string): Set<string> {
  const withoutFences = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const match of withoutFences.matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const base = (match[1] ?? '')
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

const isExternal = (target: string): boolean => /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//');

const FILES = markdownFiles(ROOT).map((file) => ({
  file,
  name: path.relative(ROOT, file),
  text: readFileSync(file, 'utf8'),
}));

/** Where a link goes: the file (inside the repository or not) and the heading anchor, if any. */
function resolveLink(from: string, target: string): { file: string; anchor: string | undefined } {
  const [pathPart = '', anchor] = target.split('#', 2);
  const file = pathPart === '' ? from : path.resolve(path.dirname(from), decodeURIComponent(pathPart));
  return { file, anchor: anchor === undefined || anchor === '' ? undefined : decodeURIComponent(anchor) };
}

describe('links of the documentation', () => {
  it('finds the pages, and links in them', () => {
    const names = FILES.map((page) => page.name);
    expect(names).toEqual(expect.arrayContaining(['README.md', 'docs/contract.md', 'docs/design.md']));
    expect(linkTargets(readFileSync(path.join(ROOT, 'README.md'), 'utf8'))).toContain('docs/contract.md');
  });

  it.each(FILES.map((page) => [page.name, page] as const))(
    '%s: relative links reach files and headings of the repository',
    (_, page) => {
      const broken: string[] = [];
      for (const target of linkTargets(page.text)) {
        if (isExternal(target)) continue;
        const { file, anchor } = resolveLink(page.file, target);
        const inside = path.relative(ROOT, file);
        if (inside.startsWith('..') || path.isAbsolute(inside)) broken.push(`${target}: outside the repository`);
        else if (!existsSync(file)) broken.push(`${target}: no such file`);
        else if (
          anchor !== undefined &&
          file.endsWith('.md') &&
          !headingAnchors(readFileSync(file, 'utf8')).has(anchor)
        ) {
          broken.push(`${target}: no heading with that anchor in ${inside}`);
        }
      }
      expect(broken).toEqual([]);
    },
  );

  it.each(FILES.map((page) => [page.name, page] as const))(
    '%s: links nowhere outside the repository (the docs say the contract in their own words)',
    (_, page) => {
      expect(linkTargets(page.text).filter(isExternal)).toEqual([]);
    },
  );

  it.each(FILES.map((page) => [page.name, page] as const))('%s: names no file outside the repository', (_, page) => {
    const outside = [
      /\.\.\/shared\b/,
      /\bshared\/(?:spec|api-)/,
      /shared project folder/i,
      /\bapi-contract\.md\b/,
      /\bapi-additions\.md\b/,
      /\bspec\/name-profile-service\.md\b/,
      /(?:^|[\s(`'"])\/work\//m,
    ];
    expect(outside.filter((pattern) => pattern.test(page.text)).map(String)).toEqual([]);
  });

  it('docs/webhooks.md shows examples/webhook-receiver.ts as it is, the receiver the tests run', () => {
    const page = readFileSync(path.join(ROOT, 'docs', 'webhooks.md'), 'utf8');
    const section = page.slice(page.indexOf('### Verifying: a receiver in Node'));
    const block = /^```ts\n([\s\S]*?)^```$/m.exec(section)?.[1];
    expect(block).toBe(readFileSync(path.join(ROOT, 'examples', 'webhook-receiver.ts'), 'utf8'));
  });

  it('the link checker catches what it is for', () => {
    const from = path.join(ROOT, 'docs', 'x.md');
    expect(linkTargets('[a](b.md) `[c](d.md)` ![e](f.png)\n```\n[g](h.md)\n```\n[i]: j.md "t"')).toEqual([
      'b.md',
      'f.png',
      'j.md',
    ]);
    expect(path.relative(ROOT, resolveLink(from, '../../shared/api-contract.md').file).startsWith('..')).toBe(true);
    expect(resolveLink(from, '#here')).toEqual({ file: from, anchor: 'here' });
    expect([...headingAnchors('# Owner check: `GET /api/owner-check`\n## A\n## A\n```\n# not\n```')]).toEqual([
      'owner-check-get-apiowner-check',
      'a',
      'a-1',
    ]);
  });
});

describe('docs/contract.md', () => {
  const contract = readFileSync(path.join(ROOT, 'docs', 'contract.md'), 'utf8');
  const flowing = contract.replace(/\s+/g, ' ');

  it('shows the example of GET /api/demo@me exactly, key order included', () => {
    const block = /### Example: `GET \/api\/demo@me`[\s\S]*?```json\n([\s\S]*?)```/.exec(contract)?.[1];
    expect(block).toBeDefined();
    expect(JSON.stringify(JSON.parse(block ?? ''))).toBe(JSON.stringify(JSON.parse(CONTRACT_EXAMPLE)));
  });

  it('states every error message the service writes', () => {
    const messages = [
      INVALID_NAME_MESSAGE,
      INVALID_EMAIL_MESSAGE,
      MISSING_PARAMETERS_MESSAGE,
      TOO_MANY_NAMES_MESSAGE,
      NAMES_REQUIRED_MESSAGE,
      INVALID_JSON_BODY_MESSAGE,
      EXPECTED_JSON_MESSAGE,
      requestBodyTooLargeMessage(MAX_BATCH_BODY_BYTES),
      INVALID_SIZE_MESSAGE,
      INVALID_FALLBACK_MESSAGE,
      INVALID_FORMAT_MESSAGE,
      PROFILE_NOT_FOUND_MESSAGE,
      NO_AVATAR_MESSAGE,
      MISSING_PREFIX_MESSAGE,
      INVALID_PREFIX_MESSAGE,
      INVALID_NAMESPACE_MESSAGE,
      INVALID_ADDRESS_MESSAGE,
      INVALID_PAGE_SIZE_MESSAGE,
      INVALID_CURSOR_MESSAGE,
      RESOURCE_REQUIRED_MESSAGE,
      INVALID_RESOURCE_MESSAGE,
      NO_NAMES_MESSAGE,
      API_KEY_REQUIRED_MESSAGE,
      WEBHOOK_NOT_FOUND_MESSAGE,
      TOO_MANY_WEBHOOKS_MESSAGE,
      SERVICE_UNAVAILABLE_MESSAGE,
      INTERNAL_SERVER_ERROR_MESSAGE,
      tooManyRequestsMessage(42).replace('42', 'N'),
      'Not found',
      'Method not allowed',
      'Bad request',
      'Request headers too large',
      'Request timeout',
    ];
    expect(messages.filter((message) => !flowing.includes(message))).toEqual([]);
  });

  it('lists every avatar origin fetch outcome the metrics count, and no other', () => {
    const operations = readFileSync(path.join(ROOT, 'docs', 'operations.md'), 'utf8');
    const section = /### Avatar origin fetch outcomes\n([\s\S]*?)\n#/.exec(operations)?.[1] ?? '';
    const listed = [...section.matchAll(/^\| `([a-z-]+)` /gm)].map((match) => match[1]);
    expect(listed).toEqual([...IMAGE_OUTCOMES]);
  });

  it('names only settings the code reads and the README lists', () => {
    const section = /## Configuration\n([\s\S]*?)\n## /.exec(contract)?.[1] ?? '';
    const variables = [...section.matchAll(/^\| `([A-Z][A-Z0-9_]+)`(?:, `([A-Z][A-Z0-9_]+)`)?/gm)].flatMap((match) =>
      [match[1], match[2]].filter((name) => name !== undefined),
    );
    expect(variables.length).toBeGreaterThan(10);
    const configFolder = path.join(ROOT, 'src', 'config');
    const configSource = readdirSync(configFolder)
      .map((file) => readFileSync(path.join(configFolder, file), 'utf8'))
      .join('\n');
    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    expect(variables.filter((name) => !configSource.includes(`'${name}'`))).toEqual([]);
    expect(variables.filter((name) => !readme.includes(`\`${name}\``))).toEqual([]);
  });
});

/**
 * Code comments give the rule and its reason, never a measured figure: figures go stale with the
 * next change and belong in bench/README.md or docs/decisions.md, to which a comment links.
 *
 * A figure is a size, share or sub-millisecond time in a comment (`27 µs`, `60 KB of 821 KB`,
 * `5 %`), unless it is a setting's or a limit's (`default 8 MB`, `at most 2 s`, `±10 %`); a time
 * in milliseconds or seconds only when the comment says it was measured (`cost about 40 ms`);
 * a vague measure (`tens of milliseconds`); and a benchmark round cited as evidence
 * (`"Issue 25, seventh round"`). A figure that is a fact, not a measurement, may carry the
 * marker `(not measured)` in its sentence.
 */
const SIZE_SHARE_OR_MICROS = /(?<![\w.±-])\d[\d,]*(?:\.\d+)?\s?(?:µs|ns|B|KB|kB|KiB|MB|MiB|GB|%|×(?!\s?\d))(?![\w])/g;
const MILLIS_OR_SECONDS = /(?<![\w.±-])\d[\d,]*(?:\.\d+)?\s?(?:ms|s)(?![\w])/g;
/** Words just before a figure (or `by default` just after) that make it a setting's or a limit's. */
const SETTING_BEFORE =
  /\b(?:default|defaults to|at most|up to|no more than|bound(?:ed)? (?:by|of|at)|limit(?:ed)? (?:to|of)|max(?:imum)?|min(?:imum)?|every|after|within|timeout|deadline|then|doubling)\b[^.;()]{0,12}$/i;
const SETTING_AFTER = /^\s?[^\s.;,()]*\s?by default\b/i;
const MEASURED_NEAR = /\b(?:about|around|roughly|cost|costs|costing|took|takes|measured|fell|saved|allocated|peak)\b/i;
const VAGUE = /\b(?:tens|hundreds|thousands) of (?:microseconds|milliseconds|kilobytes|megabytes)\b/gi;
const ORDINAL =
  '(?:\\d+(?:st|nd|rd|th)|(?:[a-z]+-)?(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth)|tenth|eleventh|twelfth|(?:thir|four|fif|six|seven|eigh|nine)teenth|twentieth)';
const ROUND_CITED = new RegExp(`"[^"]*\\bround\\b[^"]*"|\\b${ORDINAL}\\s+round\\b(?![- ]trip)|\\bround \\d+\\b`, 'gi');
const NOT_MEASURED = '(not measured)';

function comments(source: string): Array<{ line: number; text: string }> {
  return [...source.matchAll(/\/\*[\s\S]*?\*\/|(?<![:'"`\\])\/\/[^\n]*/g)].map((match) => ({
    line: source.slice(0, match.index).split('\n').length,
    text: match[0],
  }));
}

/** The measured figures of one comment, as `line: figure`. */
function measuredFigures(comment: { line: number; text: string }): string[] {
  const found: string[] = [];
  const at = (index: number, figure: string) =>
    found.push(`${comment.line + comment.text.slice(0, index).split('\n').length - 1}: ${figure}`);
  const sentence = (index: number) => {
    const start = Math.max(comment.text.lastIndexOf('. ', index), comment.text.lastIndexOf(';', index));
    const end = comment.text.slice(index).search(/\.\s|;|$/);
    return comment.text.slice(start + 1, index + end);
  };
  const setting = (match: RegExpExecArray) =>
    SETTING_BEFORE.test(comment.text.slice(Math.max(0, match.index - 40), match.index)) ||
    SETTING_AFTER.test(comment.text.slice(match.index + match[0].length)) ||
    sentence(match.index).includes(NOT_MEASURED);
  const saidMeasured = (index: number, length: number) =>
    MEASURED_NEAR.test(comment.text.slice(Math.max(0, index - 50), index + length + 30));
  for (const match of comment.text.matchAll(SIZE_SHARE_OR_MICROS)) {
    if (!setting(match)) at(match.index, match[0]);
  }
  for (const match of comment.text.matchAll(MILLIS_OR_SECONDS)) {
    if (!setting(match) && saidMeasured(match.index, match[0].length)) at(match.index, match[0]);
  }
  for (const match of comment.text.matchAll(VAGUE)) {
    if (MEASURED_NEAR.test(comment.text.slice(Math.max(0, match.index - 30), match.index))) at(match.index, match[0]);
  }
  for (const match of comment.text.matchAll(ROUND_CITED)) at(match.index, match[0]);
  return found;
}

function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(folder, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

describe('code comments', () => {
  const checked = sourceFiles(path.join(ROOT, 'src')).map((file) => path.relative(ROOT, file));

  it('carry no measured figure (the rule and its reason; figures live in bench/README.md and docs/decisions.md)', () => {
    expect(checked.length).toBeGreaterThan(100);
    const figures = checked.flatMap((file) =>
      comments(readFileSync(path.join(ROOT, file), 'utf8')).flatMap((comment) =>
        measuredFigures(comment).map((figure) => `${file}:${figure}`),
      ),
    );
    expect(figures).toEqual([]);
  });

  it('the figure check catches what it is for, and leaves settings and limits alone', () => {
    const check = (text: string) => measuredFigures({ line: 1, text });
    expect(check('// building it cost PostgreSQL about 27 µs a profile')).toEqual(['1: 27 µs']);
    expect(check('/** (60 KB of the 821 KB a request allocated) */')).toEqual(['1: 60 KB', '1: 821 KB']);
    expect(check('// a false positive (about 5 % when full)')).toEqual(['1: 5 %']);
    expect(check('// 0.85× a static server; a 2000×1500 JPEG')).toEqual(['1: 0.85×']);
    expect(check('// each start costing about 40 ms of CPU')).toEqual(['1: 40 ms']);
    expect(check('// a 2000×1500 JPEG takes tens of milliseconds')).toEqual(['1: tens of milliseconds']);
    expect(check('// (bench/README.md, "Issue 25, seventh round")')).toEqual(['1: "Issue 25, seventh round"']);
    expect(check('// measured in round 12')).toEqual(['1: round 12']);
    expect(check('/** Bytes kept (default 8 MB). */')).toEqual([]);
    expect(check('// at most 2 s; a 5 s timeout; retries with ±10 % jitter; one round trip')).toEqual([]);
    expect(check("// Shared caches' header lines are bounded (Varnish: 8 KB by default)")).toEqual([]);
    expect(check("// a lookup's statement: tens of milliseconds, so the deadline has room")).toEqual([]);
    expect(check('/* building it in every lookup cost about 27 µs */')).toEqual(['1: 27 µs']);
    expect(check('// 100 names fit in 40 KiB (not measured): 400 bytes each')).toEqual([]);
    expect(check("const url = 'https://example.com'; // 10 s")).toEqual([]);
  });
});
