/**
 * The data commands end to end, as an operator runs them: child processes against a test
 * database, checked by exit code and output.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateNdjson } from '../src/data/generator.js';
import { snapshotDatabase } from './support/data-files.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from './support/databases.js';

const run = promisify(execFile);
/** Each command is a process of its own that loads the service's modules and opens a database. */
const SLOW = 120_000;

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `tsx src/cli/<command>.ts` with the given environment on top of a clean one. */
async function cli(command: string, args: string[], env: Record<string, string>): Promise<CliResult> {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => name !== 'DATABASE_URL' && name !== 'DATA_DIR'),
  );
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', `src/cli/${command}.ts`, ...args], {
      env: { ...base, ...env },
      maxBuffer: 64 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

const noStackTrace = (result: CliResult) => expect(result.stderr).not.toMatch(/^\s+at /m);

let folder: string;
beforeAll(() => {
  folder = mkdtempSync(path.join(os.tmpdir(), 'nps-cli-'));
});
afterAll(() => {
  rmSync(folder, { recursive: true, force: true });
});

function file(name: string, lines: unknown[]): string {
  const target = path.join(folder, name);
  writeFileSync(
    target,
    `${lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n')}\n`,
  );
  return target;
}

describe.each(databaseKinds())('data commands on %s', (kind) => {
  let testDb: TestDatabase;

  beforeAll(async () => {
    testDb = await createTestDatabase(kind);
  });
  afterAll(async () => {
    await testDb?.drop();
  });

  /** Opens the database only while the command is not running: PGlite serves one process. */
  async function snapshot() {
    const handle = await testDb.open();
    try {
      return await snapshotDatabase(handle.db);
    } finally {
      await handle.close();
    }
  }

  it(
    'loads a database without profiles in bulk mode by itself',
    async () => {
      const empty = await createTestDatabase(kind);
      try {
        const data = file(
          `first-${kind}.ndjson`,
          [...generateNdjson({ profiles: 5, seed: 3, namespaces: 2 })].join('').trimEnd().split('\n'),
        );
        const first = await cli('import', [data], empty.env);
        expect(first.code).toBe(0);
        expect(first.stderr).toContain('The database has no profiles yet: loading in bulk mode.');
        const second = await cli('import', [data], empty.env);
        expect(second.code).toBe(0);
        expect(second.stderr).not.toContain('bulk mode');
        expect(second.stdout).toContain('5 profiles (0 new or changed)');
      } finally {
        await empty.drop();
      }
    },
    SLOW,
  );

  it(
    'migrates and seeds, the second seed changing nothing',
    async () => {
      const migrated = await cli('migrate', [], testDb.env);
      expect(migrated.code).toBe(0);
      expect(migrated.stdout).toContain('is migrated');

      const seeded = await cli('seed', [], testDb.env);
      expect(seeded).toMatchObject({ code: 0 });
      expect(seeded.stdout).toMatch(/3 namespaces and 7 profiles \(7 new or changed\)/);
      const again = await cli('seed', [], testDb.env);
      expect(again.stdout).toContain('(0 new or changed)');
    },
    SLOW,
  );

  it(
    'rejects a file with bad lines, lists each with its number, exits 1 and writes nothing',
    async () => {
      const before = await snapshot();
      const bad = file('bad.ndjson', [
        { kind: 'namespace', name: 'cli', ownerEmail: 'cli-owner@example.com' },
        '{"kind":"profile",',
        { kind: 'profile', name: 'ok@cli', creatorEmail: 'ok@example.com' },
        { kind: 'profile', name: 'lost@nowhere', creatorEmail: 'lost@example.com' },
        {
          kind: 'profile',
          name: 'x@cli',
          creatorEmail: 'x@example.com',
          records: { first: { type: 'name', value: 'X' } },
        },
      ]);
      const result = await cli('import', [bad], testDb.env);
      expect(result.code).toBe(1);
      const lines = result.stderr.trimEnd().split('\n');
      expect(lines).toContain(lines.find((line) => line.startsWith('line 2: invalid JSON')));
      expect(lines).toContain(
        'line 4: unknown namespace "nowhere" of "lost@nowhere": not in the database and not declared on an earlier line',
      );
      expect(lines.some((line) => line.startsWith('line 5: record key "first" is not a record number'))).toBe(true);
      expect(result.stderr).toContain('Rejected');
      expect(result.stderr).toContain('3 bad lines of 5. Nothing was written.');
      noStackTrace(result);
      expect(await snapshot()).toEqual(before);
    },
    SLOW,
  );

  it(
    'imports a good file, and exports it to a file and to standard output',
    async () => {
      const good = file(
        'good.ndjson',
        [...generateNdjson({ profiles: 40, seed: 9, namespaces: 3 })].join('').trimEnd().split('\n'),
      );
      const imported = await cli('import', [good], testDb.env);
      expect(imported.code).toBe(0);
      // The database already has profiles: readers must not be locked out.
      expect(imported.stderr).not.toContain('bulk mode');
      expect(imported.stdout).toMatch(
        /^Imported .*good\.ndjson.*: 43 lines, 3 namespaces .*, 40 profiles \(40 new or changed\)/,
      );

      const target = path.join(folder, `export-${kind}.ndjson`);
      const exported = await cli('export', [target], testDb.env);
      expect(exported.code).toBe(0);
      expect(exported.stderr).toMatch(/Exported \d+ namespaces and 47 profiles/);
      const text = readFileSync(target, 'utf8');
      expect(text.trimEnd().split('\n')).toHaveLength(5 + 47); // demo data plus the file (namespace "me" is shared)
      expect(readdirSync(folder).filter((name) => name.includes('.partial-'))).toEqual([]);

      const toStdout = await cli('export', [], testDb.env);
      expect(toStdout.stdout).toBe(text);

      const reimported = await cli('import', [target], testDb.env);
      expect(reimported.stdout).toContain('(0 new or changed), 47 profiles (0 new or changed)');
    },
    SLOW,
  );

  it(
    'fails with one clear line for a missing file, a folder, or a bad argument list',
    async () => {
      const missing = await cli('import', [path.join(folder, 'missing.ndjson')], testDb.env);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toMatch(/^Cannot read .*missing\.ndjson: ENOENT/);
      noStackTrace(missing);

      const directory = await cli('import', [folder], testDb.env);
      expect(directory.code).toBe(1);
      expect(directory.stderr).toContain('it is a directory');

      const usage = await cli('import', [], testDb.env);
      expect(usage.code).toBe(2);
      expect(usage.stderr).toContain('Usage: npm run import -- [--bulk] <file.ndjson>');
    },
    SLOW,
  );

  it(
    'stops with exit code 2 on a bad environment variable, naming it',
    async () => {
      const result = await cli('import', [path.join(folder, 'whatever.ndjson')], {
        ...testDb.env,
        DB_POOL_SIZE: 'lots',
      });
      expect(result.code).toBe(2);
      expect(result.stderr.trim()).toMatch(/^Invalid configuration: DB_POOL_SIZE /);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
    },
    SLOW,
  );
});

describe('data commands without a database', () => {
  it(
    'says which database could not be opened, without its password',
    async () => {
      const result = await cli('import', [file('one.ndjson', ['{}'])], {
        DATABASE_URL: 'postgres://app:hunter2@127.0.0.1:1/none',
        DB_CONNECT_TIMEOUT: '2',
      });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(
        'The PostgreSQL database postgres://app:***@127.0.0.1:1/none could not be opened',
      );
      expect(result.stderr).not.toContain('hunter2');
      noStackTrace(result);
    },
    SLOW,
  );

  it(
    'generates the same bytes as the generator, to standard output or a file',
    async () => {
      const expected = [...generateNdjson({ profiles: 25, seed: 3, namespaces: 8 })].join('');
      const first = await cli('gen', ['--profiles', '25', '--seed', '3'], {});
      expect(first.code).toBe(0);
      expect(first.stdout).toBe(expected);
      const target = path.join(folder, 'gen.ndjson');
      const second = await cli('gen', ['--profiles', '25', '--seed', '3', '--out', target], {});
      expect(second.code).toBe(0);
      expect(readFileSync(target, 'utf8')).toBe(expected);

      const bad = await cli('gen', ['--profiles', 'many'], {});
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('--profiles must be a whole number');
    },
    SLOW,
  );
});
