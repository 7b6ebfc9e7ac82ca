import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { generateNdjson } from '../src/data/generator.js';
import { lockFolder } from '../src/db/folder-lock.js';
import { type CliResult, type CommandName, runCli, runInProcess, STACK_LINE, startCli } from './support/cli.js';
import { snapshotDatabase } from './support/data-files.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from './support/databases.js';
import { eventually } from './support/eventually.js';

/**
 * Each command is a process of its own that loads the service's modules and opens a database.
 * Tests of what a command does run it in the test process (runInProcess); each command also
 * runs as a process (runCli, startCli) where the process matters: its exit code, its pipes,
 * another process holding the database.
 */
const SLOW = 120_000;

const noStackTrace = (result: CliResult) => expect(result.stderr).not.toMatch(STACK_LINE);

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

function generatedFile(name: string, profiles: number, seed: number): string {
  const target = path.join(folder, name);
  writeFileSync(target, [...generateNdjson({ profiles, seed, namespaces: 3 })].join(''));
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

  /** Opens the database only while no command runs: PGlite serves one process. */
  async function snapshotOf(database: TestDatabase) {
    const handle = await database.open();
    try {
      return await snapshotDatabase(handle.db);
    } finally {
      await handle.close();
    }
  }

  it(
    'migrates and seeds, the second seed changing nothing',
    async () => {
      const migrated = await runCli('migrate', [], { env: testDb.env });
      expect(migrated.code).toBe(0);
      expect(migrated.stdout).toContain('is migrated');

      const seeded = await runCli('seed', [], { env: testDb.env });
      expect(seeded).toMatchObject({ code: 0 });
      expect(seeded.stdout).toMatch(/3 namespaces and 7 profiles \(7 new or changed\)/);
      const again = await runInProcess('seed', [], { env: testDb.env });
      expect(again.stdout).toContain('(0 new or changed)');
    },
    SLOW,
  );

  it(
    'rejects a file with bad lines, lists each with its number, exits 1 and writes nothing',
    async () => {
      const before = await snapshotOf(testDb);
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
      const result = await runInProcess('import', [bad], { env: testDb.env });
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
      expect(await snapshotOf(testDb)).toEqual(before);
    },
    SLOW,
  );

  it(
    'imports a good file, and exports it to a file (owner-only) and to standard output',
    async () => {
      const good = generatedFile('good.ndjson', 40, 9);
      const imported = await runInProcess('import', [good], { env: testDb.env });
      expect(imported.code).toBe(0);
      expect(imported.stdout).toMatch(
        /^Imported .*good\.ndjson.*: 43 lines, 3 namespaces .*, 40 profiles \(40 new or changed\)/,
      );

      const target = path.join(folder, `export-${kind}.ndjson`);
      writeFileSync(target, 'an older dump, readable by all\n', { mode: 0o644 });
      const exported = await runInProcess('export', [target], { env: testDb.env });
      expect(exported.code).toBe(0);
      expect(exported.stderr).toMatch(/Exported \d+ namespaces and 47 profiles/);
      // It holds private e-mails: readable and writable by its owner only, whatever was there.
      expect(statSync(target).mode & 0o777).toBe(0o600);
      const text = readFileSync(target, 'utf8');
      expect(text.trimEnd().split('\n')).toHaveLength(5 + 47); // demo data plus the file (namespace "me" is shared)
      expect(readdirSync(folder).filter((name) => name.includes('.partial-'))).toEqual([]);

      const toStdout = await runInProcess('export', [], { env: testDb.env });
      expect(toStdout.stdout).toBe(text);

      const reimported = await runInProcess('import', [target], { env: testDb.env });
      expect(reimported.stdout).toContain('(0 new or changed), 47 profiles (0 new or changed)');
    },
    SLOW,
  );

  it(
    'ends quietly when the reader of its standard output stops early (| head)',
    async () => {
      // Several times what a pipe buffers, so the export is still writing when the reader has gone.
      const many = generatedFile('many.ndjson', 1000, 4);
      expect((await runInProcess('import', [many], { env: testDb.env })).code).toBe(0);
      const commands: [CommandName, string[]][] = [['export', []]];
      // gen opens no database: once is enough.
      if (kind === databaseKinds()[0]) commands.push(['gen', ['--profiles', '100000']]);
      for (const [command, args] of commands) {
        const running = startCli(command, args, { env: testDb.env, rawStdout: true });
        // Read the first line, then close the pipe, as `head -n 1` does.
        const firstLine = await new Promise<string>((resolve) => {
          let seen = '';
          running.child.stdout?.setEncoding('utf8').on('data', function onData(chunk: string) {
            seen += chunk;
            if (!seen.includes('\n')) return;
            running.child.stdout?.off('data', onData);
            running.child.stdout?.destroy();
            resolve(seen.slice(0, seen.indexOf('\n')));
          });
        });
        expect(JSON.parse(firstLine)).toMatchObject({ kind: 'namespace' });
        const result = await running.done;
        expect(result, `${command}: ${result.stderr}`).toMatchObject({ code: 0, signal: null, stderr: '' });
      }
    },
    SLOW,
  );

  it(
    'shows progress with a percentage and the time left for a file, lines and rate for a pipe',
    async () => {
      // A line per batch, so the lines come however fast this machine imports.
      const big = generatedFile(`progress-${kind}.ndjson`, 6_000, 12);
      const fromFile = await runInProcess('import', ['--progress-every', '0', big], { env: testDb.env });
      expect(fromFile.code).toBe(0);
      expect(fromFile.stderr).toMatch(
        /^\.\.\. \d+% of \d+(\.\d)? MB, [\d,]+ lines, [\d,]+ lines\/s, about \d+ s left$/m,
      );

      // A process of its own, whose standard input is a pipe.
      const other = generatedFile(`progress-pipe-${kind}.ndjson`, 6_000, 13);
      const fromPipe = await runCli('import', ['--progress-every=0', '-'], {
        env: testDb.env,
        input: readFileSync(other),
      });
      expect(fromPipe.code).toBe(0);
      expect(fromPipe.stderr).toMatch(/^\.\.\. [\d,]+ lines, [\d,]+ lines\/s$/m);
      expect(fromPipe.stderr).not.toContain('%');
    },
    SLOW,
  );

  it(
    'fails with one clear line for a missing file, a folder, or a bad argument list',
    async () => {
      const missing = await runInProcess('import', [path.join(folder, 'missing.ndjson')], { env: testDb.env });
      expect(missing.code).toBe(1);
      expect(missing.stderr).toMatch(/^Cannot read .*missing\.ndjson: ENOENT/);
      noStackTrace(missing);

      const directory = await runInProcess('import', [folder], { env: testDb.env });
      expect(directory.code).toBe(1);
      expect(directory.stderr).toContain('it is a directory');

      const usage = await runInProcess('import', [], { env: testDb.env });
      expect(usage.code).toBe(2);
      expect(usage.stderr).toContain(
        'Usage: npm run import -- [--replace-all] [--dry-run] [--bulk] [--progress-every SECONDS] <file.ndjson>',
      );

      const badInterval = await runInProcess('import', ['--progress-every', 'often', path.join(folder, 'x.ndjson')], {
        env: testDb.env,
      });
      expect(badInterval.code).toBe(2);
      expect(badInterval.stderr).toContain('--progress-every takes seconds from 0 to 86400, not "often".');
    },
    SLOW,
  );

  it(
    'stops with exit code 2 on a bad environment variable, naming it',
    async () => {
      const result = await runInProcess('import', [path.join(folder, 'whatever.ndjson')], {
        env: { ...testDb.env, DB_POOL_SIZE: 'lots' },
      });
      expect(result.code).toBe(2);
      expect(result.stderr.trim()).toMatch(/^Invalid configuration: DB_POOL_SIZE /);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
    },
    SLOW,
  );

  it(
    'imports with --replace-all, after a --dry-run that printed the same counts and wrote nothing',
    async () => {
      const truth = file(`truth-${kind}.ndjson`, [
        { kind: 'namespace', name: 'only', ownerEmail: 'only-owner@example.com' },
        { kind: 'profile', name: 'one@only', creatorEmail: 'one@example.com' },
        { kind: 'profile', name: 'two@only', creatorEmail: 'two@example.com' },
        { kind: 'remove', name: 'gone@only' },
      ]);
      // A database of its own holding the demo data: something to remove, and no more than that.
      const own = await createTestDatabase(kind);
      onTestFinished(() => own.drop());
      expect((await runInProcess('migrate', [], { env: own.env })).code).toBe(0);
      expect((await runInProcess('seed', [], { env: own.env })).code).toBe(0);
      const before = await snapshotOf(own);
      const dry = await runInProcess('import', ['--replace-all', '--dry-run', truth], { env: own.env });
      expect(dry.code, dry.stderr).toBe(0);
      const counts =
        /namespaces 1 to add, 0 to replace, ([\d,]+) to remove; profiles 2 to add, 0 to replace, ([\d,]+) to remove \(1 removal of what did not exist\); ([\d,]+) change-log entries to write\. Nothing was written/.exec(
          dry.stdout,
        );
      expect(counts, dry.stdout).not.toBeNull();
      const [namespacesRemoved, profilesRemoved] = [counts?.[1] ?? '', counts?.[2] ?? ''];
      expect(Number(namespacesRemoved.replaceAll(',', ''))).toBeGreaterThanOrEqual(3); // the demo namespaces at least
      expect(Number(profilesRemoved.replaceAll(',', ''))).toBeGreaterThanOrEqual(7);
      // One entry per profile added and per profile removed.
      expect(Number(counts?.[3]?.replaceAll(',', ''))).toBe(Number(profilesRemoved.replaceAll(',', '')) + 2);
      expect(await snapshotOf(own)).toEqual(before);

      const real = await runInProcess('import', ['--replace-all', truth], { env: own.env });
      expect(real.code, real.stderr).toBe(0);
      expect(real.stdout).toContain(
        `profiles (2 new or changed), removed ${namespacesRemoved} namespaces and ${profilesRemoved} profiles (1 removal of what did not exist), ${counts?.[3]} change-log entries`,
      );
      const exported = await runInProcess('export', [], { env: own.env });
      expect(
        exported.stdout
          .trimEnd()
          .split('\n')
          .map((line) => JSON.parse(line).name),
      ).toEqual(['only', 'one@only', 'two@only']);
    },
    SLOW,
  );
});

describe.skipIf(!databaseKinds().includes('postgres'))('imports and other sessions on PostgreSQL', () => {
  /** Whether `statement` gets through within a second (instead of waiting for a lock). */
  async function getsThrough(session: postgres.Sql, statement: string): Promise<boolean> {
    try {
      await session.begin(async (tx) => {
        await tx`set local lock_timeout = 1000`;
        await tx.unsafe(statement);
        await tx`rollback`.catch(() => {}); // probes change nothing
        throw new ProbeDone();
      });
    } catch (error) {
      if (error instanceof ProbeDone) return true;
      if ((error as { code?: string }).code === '55P03') return false; // lock_not_available
      throw error;
    }
    return true;
  }
  class ProbeDone extends Error {}

  /**
   * A reader and a writer, each given a second, while an import into an empty database runs. The
   * import reads a pipe that stays open after its first batches until both have had their turn,
   * so it is still running whatever the speed of the machine.
   */
  async function sessionsDuringImport(args: string[]) {
    const empty = await createTestDatabase('postgres');
    const session = postgres(empty.url ?? '', { max: 1, onnotice: () => {} });
    try {
      const lines = [...generateNdjson({ profiles: 5_000, seed: 21, namespaces: 3 })];
      const last = lines.pop() ?? '';
      // More than two of the importer's batches, so it has written some when the pipe pauses.
      const running = startCli('import', [...args, '-'], { env: empty.env, input: lines.join(''), holdInput: true });
      // Writing has begun: the import's transaction holds a lock on records.
      const writing = async () => {
        const [held] = await session`
          select 1 from pg_locks l join pg_class c on c.oid = l.relation
          where c.relname = 'records' and l.pid <> pg_backend_pid() and l.granted`;
        return held !== undefined;
      };
      await eventually(writing, { what: 'the import writing', withinMs: 60_000 }).catch((error: unknown) => {
        throw new Error(`${(error as Error).message}:\n${running.stderr}`);
      });
      const reader = await getsThrough(
        session,
        'select count(*) from profiles p join records r on r.profile_id = p.id',
      );
      const writer = await getsThrough(session, "insert into namespaces values ('probe', 'probe@example.com')");
      const stillRunning = running.child.exitCode === null;
      running.child.stdin?.end(last);
      const imported = await running.done;
      expect(imported.stdout).toContain('5,000 profiles');
      return { reader, writer, imported, stillRunning };
    } finally {
      await session.end();
      await empty.drop();
    }
  }

  it(
    'never locks readers out, not even for the first load into an empty database or with --bulk',
    async () => {
      const plain = await sessionsDuringImport([]);
      expect(plain.imported.code, plain.imported.stderr).toBe(0);
      expect(plain).toMatchObject({ reader: true, writer: true, stillRunning: true });
      // --bulk checks references once at the end, so other writers must wait; readers need not.
      const bulk = await sessionsDuringImport(['--bulk']);
      expect(bulk.imported.code, bulk.imported.stderr).toBe(0);
      expect(bulk).toMatchObject({ reader: true, writer: false, stillRunning: true });
    },
    SLOW,
  );
});

describe('data commands without a database', () => {
  it(
    'print their usage for --help and -h, and exit 0 without touching a database',
    async () => {
      const env = { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' };
      for (const [command, usage] of [
        [
          'import',
          'Usage: npm run import -- [--replace-all] [--dry-run] [--bulk] [--progress-every SECONDS] <file.ndjson>',
        ],
        ['export', 'Usage: npm run export -- [file.ndjson]'],
        ['gen', 'Usage: npm run gen -- --profiles N'],
        ['migrate', 'Usage: npm run db:migrate'],
        ['seed', 'Usage: npm run db:seed'],
        ['print-schema', 'Usage: npm run schema'],
      ] as const) {
        for (const flag of ['--help', '-h']) {
          // One in a process of its own: the help is all the script does, its exit code 0.
          const run = command === 'print-schema' && flag === '-h' ? runCli : runInProcess;
          const result = await run(command, [flag], { env });
          expect(result, `${command} ${flag}`).toMatchObject({ code: 0, stderr: '' });
          expect(result.stdout.startsWith(`${usage}`), `${command} ${flag}:\n${result.stdout}`).toBe(true);
          expect(result.stdout.split('\n').length).toBeGreaterThan(3);
        }
      }
    },
    SLOW,
  );

  /** `migrate` in the test process, or in a process of its own with `run` runCli. */
  const openFailure = async (env: Record<string, string>, run = runInProcess) => {
    const result = await run('migrate', [], { env: { DB_CONNECT_TIMEOUT: '3', ...env } });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    noStackTrace(result);
    return result.stderr.trim();
  };

  it(
    'names DATABASE_URL when the server refuses, without the password',
    async () => {
      const message = await openFailure({ DATABASE_URL: 'postgres://app:hunter2@127.0.0.1:1/none' }, runCli);
      expect(message).toBe(
        'The PostgreSQL database postgres://app:***@127.0.0.1:1/none could not be opened: nothing accepts ' +
          'connections at 127.0.0.1:1 (connection refused). Is PostgreSQL running there? Check DATABASE_URL.',
      );
      expect(message).not.toContain('hunter2');
    },
    SLOW,
  );

  it.skipIf(!process.env.TEST_DATABASE_URL)(
    'names DATABASE_URL for a database that does not exist and a user the server refuses',
    async () => {
      const server = new URL(process.env.TEST_DATABASE_URL ?? '');
      const missing = new URL(server);
      missing.pathname = '/nps_no_such_database';
      expect(await openFailure({ DATABASE_URL: missing.toString() })).toMatch(
        /could not be opened: the database "nps_no_such_database" does not exist on .*\. Create it \(createdb\) or fix the database name in DATABASE_URL\.$/,
      );
      const stranger = new URL(server);
      stranger.username = 'nps_no_such_role';
      expect(await openFailure({ DATABASE_URL: stranger.toString() })).toMatch(
        /could not be opened: PostgreSQL refused user "nps_no_such_role" \(.*\)\. Check the user in DATABASE_URL\.$/,
      );
    },
    SLOW,
  );

  it(
    'names DATA_DIR for a folder that is a file, or in use by another process',
    async () => {
      const notAFolder = file('not-a-folder', ['just a file']);
      expect(await openFailure({ DATA_DIR: notAFolder })).toBe(
        `The embedded database in ${notAFolder} could not be opened: ${notAFolder} is not a directory. ` +
          'Point DATA_DIR at a folder (it is created when missing).',
      );

      const busy = mkdtempSync(path.join(folder, 'busy-'));
      const lock = lockFolder(busy); // held by this test process, which is running
      try {
        expect(await openFailure({ DATA_DIR: busy }, runCli)).toBe(
          `The embedded database in ${busy} could not be opened: it is in use by another process (pid ${process.pid} on ${os.hostname()}); ` +
            'stop that process first, or point DATA_DIR at another folder.',
        );
      } finally {
        lock.release();
      }
    },
    SLOW,
  );

  it(
    'generates the same bytes as the generator, to standard output or a file',
    async () => {
      const expected = [...generateNdjson({ profiles: 25, seed: 3, namespaces: 8 })].join('');
      const first = await runCli('gen', ['--profiles', '25', '--seed', '3']);
      expect(first.code).toBe(0);
      expect(first.stdout).toBe(expected);
      const target = path.join(folder, 'gen.ndjson');
      const second = await runInProcess('gen', ['--profiles', '25', '--seed', '3', '--out', target]);
      expect(second.code).toBe(0);
      expect(readFileSync(target, 'utf8')).toBe(expected);

      const bad = await runInProcess('gen', ['--profiles', 'many']);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('--profiles must be a whole number');
    },
    SLOW,
  );
});
