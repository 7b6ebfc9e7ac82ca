/**
 * `npm run webhooks -- list|disable|enable|delete|--help` on every test database: every key's
 * endpoints listed without a secret, disabling and enabling as the app then sees it, deleting,
 * usage errors, unknown ids, and the embedded database held by a running server. As in
 * api-keys-cli.test.ts, the first listing runs as operators run it, a process of its own, and so
 * does the refusal while another process holds the database; the other runs are in the test
 * process (test/support/cli.ts, runInProcess).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../src/db/database.js';
import { lockFolder } from '../src/db/folder-lock.js';
import { findEndpoint, insertEndpoint } from '../src/db/webhook-queries.js';
import { newSecret, SecretStore } from '../src/webhooks/secrets.js';
import { createKey, type TestKey } from './support/api-keys.js';
import { type CliResult, runCli, runInProcess, STACK_LINE } from './support/cli.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from './support/databases.js';

const SLOW = 120_000;
const LINE = /^(wh_\w+)\t(key_\w+)\t(".*")\t(active|disabled)\t(-|".*")\tcreated (\S+)$/;

const noStackTrace = (result: CliResult) => expect(result.stderr).not.toMatch(STACK_LINE);

describe.each(databaseKinds())('npm run webhooks on %s', (kind) => {
  let testDb: TestDatabase;
  /** What every endpoint's secret is, as shown to its app and as stored. */
  const secrets: string[] = [];

  beforeAll(async () => {
    testDb = await createTestDatabase(kind);
  });
  afterAll(async () => {
    await testDb?.drop();
  });

  const webhooks = (args: string[], run = runInProcess) => run('webhooks', args, { env: testDb.env });

  /** Works on the database between commands (PGlite: one process at a time, so closed again). */
  async function withDatabase<T>(use: (handle: DatabaseHandle) => Promise<T>): Promise<T> {
    const handle = await testDb.open();
    try {
      return await use(handle);
    } finally {
      await handle.close();
    }
  }

  async function makeEndpoint(handle: DatabaseHandle, key: TestKey, url: string): Promise<string> {
    const id = `wh_${String(secrets.length).padStart(24, '0')}`;
    const secret = newSecret();
    const stored = new SecretStore(undefined).seal(secret, id);
    secrets.push(secret.shown, secret.bytes.toString('base64'), stored);
    const names: string[] = [];
    await insertEndpoint(
      handle.db,
      { id, apiKeyId: key.id, url, events: 7, description: null, secret: stored, names, namespaces: names },
      10,
    );
    return id;
  }

  it(
    "lists every key's endpoints without a secret, disables, enables and deletes them",
    async () => {
      const [first, second, third, alice, bob] = await withDatabase(async (handle) => {
        const alice = await createKey(handle);
        const bob = await createKey(handle);
        return [
          await makeEndpoint(handle, alice, 'https://a.example/hooks?token=t'),
          await makeEndpoint(handle, bob, 'https://b.example/"quoted"'),
          await makeEndpoint(handle, alice, 'https://c.example/'),
          alice,
          bob,
        ] as const;
      });

      const listed = await webhooks(['list'], runCli);
      expect(listed.code).toBe(0);
      const lines = listed.stdout.trimEnd().split('\n');
      expect(lines.map((line) => LINE.exec(line)?.slice(1, 6))).toEqual([
        [first, alice.id, '"https://a.example/hooks?token=t"', 'active', '-'],
        [second, bob.id, '"https://b.example/\\"quoted\\""', 'active', '-'],
        [third, alice.id, '"https://c.example/"', 'active', '-'],
      ]);
      expect(Number.isNaN(Date.parse(LINE.exec(lines[0] ?? '')?.[6] ?? ''))).toBe(false);
      for (const secret of secrets) expect(listed.stdout).not.toContain(secret);

      expect(await webhooks(['disable', second])).toMatchObject({ code: 0, stdout: `Disabled ${second}.\n` });
      expect(await webhooks(['disable', second])).toMatchObject({
        code: 0,
        stdout: `${second} was already disabled.\n`,
      });
      const disabled = await withDatabase((handle) => findEndpoint(handle.db, bob.id, second));
      expect(disabled).toMatchObject({ status: 'disabled', disabledReason: 'disabled by an operator' });
      expect(LINE.exec((await webhooks(['list'])).stdout.split('\n')[1] ?? '')?.slice(4, 6)).toEqual([
        'disabled',
        '"disabled by an operator"',
      ]);

      expect(await webhooks(['enable', second])).toMatchObject({ code: 0, stdout: `Enabled ${second}.\n` });
      expect(await webhooks(['enable', second])).toMatchObject({ code: 0, stdout: `${second} was already enabled.\n` });
      const enabled = await withDatabase((handle) => findEndpoint(handle.db, bob.id, second));
      expect(enabled).toMatchObject({ status: 'active', disabledReason: null });

      expect(await webhooks(['delete', first])).toMatchObject({ code: 0, stdout: `Deleted ${first}.\n` });
      expect(
        (await webhooks(['list'])).stdout
          .trimEnd()
          .split('\n')
          .map((line) => LINE.exec(line)?.[1]),
      ).toEqual([second, third]);
      for (const action of ['delete', 'disable', 'enable']) {
        const gone = await webhooks([action, first]);
        expect(gone.code).toBe(1);
        expect(gone.stderr).toBe(`No webhook endpoint has the id "${first}" (see \`webhooks list\`)\n`);
      }
    },
    SLOW,
  );

  it(
    'explains its usage, and refuses bad arguments with exit code 2',
    async () => {
      const help = await webhooks(['--help']);
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(/^Usage: npm run webhooks -- list \| disable <id> \| enable <id> \| delete <id>/);
      for (const [args, message] of [
        [[], 'Say what to do: list, disable, enable or delete'],
        [['remove', 'wh_x'], 'Unknown action: remove'],
        [['list', 'wh_x'], 'list takes no arguments: wh_x'],
        [['disable'], 'disable takes one endpoint id'],
        [['enable', 'a', 'b'], 'enable takes one endpoint id'],
        [['delete', '--force', 'wh_x'], "Unknown option '--force'"],
      ] as const) {
        const result = await webhooks([...args]);
        expect({ args, code: result.code }).toEqual({ args, code: 2 });
        expect(result.stderr).toContain(message);
        expect(result.stderr).toContain('Usage: npm run webhooks');
        noStackTrace(result);
      }
    },
    SLOW,
  );

  it.runIf(kind === 'pglite')(
    'says to stop the server first while it holds the embedded database',
    async () => {
      const busy = mkdtempSync(path.join(os.tmpdir(), 'nps-webhooks-'));
      const lock = lockFolder(busy);
      try {
        const result = await runCli('webhooks', ['list'], { env: { DATA_DIR: busy } });
        expect(result.code).toBe(1);
        expect(result.stdout).toBe('');
        expect(result.stderr).toContain('is in use by another process');
        expect(result.stderr).toContain('stop that process first');
        noStackTrace(result);
      } finally {
        lock.release();
        rmSync(busy, { recursive: true, force: true });
      }
    },
    SLOW,
  );
});
