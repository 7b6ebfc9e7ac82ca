/**
 * `npm run keys -- create|list|update|revoke|--help` on every test database: the key printed
 * once and never again, `list` lines, documents-only keys, revocation, usage errors, and the
 * embedded database held by a running server. As in data-cli.test.ts, the first key is created
 * by the command as operators run it, a process of its own, and so is the refusal while another
 * process holds the database; the other runs are in the test process (test/support/cli.ts,
 * runInProcess).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listApiKeys } from '../src/db/api-key-queries.js';
import { lockFolder } from '../src/db/folder-lock.js';
import { hashApiKey } from '../src/limits/api-key-credentials.js';
import { type CliResult, runCli, runInProcess, STACK_LINE } from './support/cli.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from './support/databases.js';

const SLOW = 120_000;
const LINE =
  /^(key_[0-9A-Za-z]{12})\t(".*")\tprofile (\d+)\/min( \(default\))?, owner check (\d+)\/min( \(default\))?\tcreated (\S+)\tlast used (\S+)\trevoked (\S+)\tdocuments-only (on|off)$/;

const noStackTrace = (result: CliResult) => expect(result.stderr).not.toMatch(STACK_LINE);

describe.each(databaseKinds())('npm run keys on %s', (kind) => {
  let testDb: TestDatabase;

  beforeAll(async () => {
    testDb = await createTestDatabase(kind);
  });
  afterAll(async () => {
    await testDb?.drop();
  });

  const keys = (args: string[], env: Record<string, string> = {}, run = runInProcess) =>
    run('keys', args, { env: { ...testDb.env, ...env } });

  it(
    'creates a key, prints it once, stores its hash, lists it without it and revokes it',
    async () => {
      const created = await keys(['create', '--name', 'Wallet app', '--profile-limit', '1000/min'], {}, runCli);
      expect(created.code).toBe(0);
      const key = created.stdout.trim();
      expect(key).toMatch(/^nps_[0-9A-Za-z]{40}$/);
      const id = /Created (key_[0-9A-Za-z]{12}) /.exec(created.stderr)?.[1];
      expect(id).toBeDefined();
      expect(created.stderr).toContain('profile 1000/min, owner check 100/min (default)');
      expect(created.stderr).not.toContain(key);

      const second = await keys(['create', '--name', 'Explorer', '--owner-check-limit', '50'], {
        API_KEY_PROFILE_LIMIT: '7000',
      });
      expect(second.code).toBe(0);
      expect(second.stdout.trim()).not.toBe(key);

      const listed = await keys(['list'], { API_KEY_PROFILE_LIMIT: '7000' });
      expect(listed.code).toBe(0);
      expect(listed.stdout).not.toContain(key);
      expect(listed.stdout).not.toContain(key.slice(4, 20));
      expect(listed.stdout).not.toContain(hashApiKey(key));
      const lines = listed.stdout.trimEnd().split('\n');
      expect(lines).toHaveLength(2);
      const [first, other] = lines.map((line) => LINE.exec(line));
      expect(first?.slice(1, 7)).toEqual([id, '"Wallet app"', '1000', undefined, '100', ' (default)']);
      expect(Number.isNaN(Date.parse(first?.[7] ?? ''))).toBe(false);
      expect(first?.slice(8)).toEqual(['never', 'no', 'off']);
      expect(other?.slice(2, 7)).toEqual(['"Explorer"', '7000', ' (default)', '50', undefined]);

      const revoked = await keys(['revoke', id ?? '']);
      expect(revoked).toMatchObject({ code: 0, stdout: `Revoked ${id}.\n` });
      const again = await keys(['revoke', id ?? '']);
      expect(again).toMatchObject({ code: 0, stdout: `${id} was already revoked.\n` });
      const after = LINE.exec((await keys(['list'])).stdout.split('\n')[0] ?? '');
      expect(Number.isNaN(Date.parse(after?.[9] ?? ''))).toBe(false);

      const handle = await testDb.open();
      try {
        const rows = await listApiKeys(handle.db);
        expect(rows.map((row) => row.keyHash)).toContain(hashApiKey(key));
        expect(JSON.stringify(rows)).not.toContain(key);
      } finally {
        await handle.close();
      }
    },
    SLOW,
  );

  it(
    'makes documents-only keys, shows the flag, and turns it on and off',
    async () => {
      const created = await keys(['create', '--name', 'Mobile app', '--documents-only']);
      expect(created.code).toBe(0);
      const id = /Created (key_[0-9A-Za-z]{12}) /.exec(created.stderr)?.[1] ?? '';
      expect(created.stderr).toContain('documents only');
      const flagOf = async () => {
        const line = (await keys(['list'])).stdout.split('\n').find((text) => text.startsWith(`${id}\t`));
        return LINE.exec(line ?? '')?.[10];
      };
      expect(await flagOf()).toBe('on');
      for (const [args, flag] of [
        [['--documents-only', 'off'], 'off'],
        [['--documents-only=on'], 'on'],
      ] as const) {
        const updated = await keys(['update', id, ...args]);
        expect(updated).toMatchObject({ code: 0, stdout: `Updated ${id}: documents-only ${flag}.\n` });
        expect(await flagOf()).toBe(flag);
      }
      const handle = await testDb.open();
      try {
        expect((await listApiKeys(handle.db)).find((row) => row.id === id)?.documentsOnly).toBe(true);
      } finally {
        await handle.close();
      }
      expect((await keys(['revoke', id])).code).toBe(0);
      const revoked = await keys(['update', id, '--documents-only', 'off']);
      expect(revoked).toMatchObject({ code: 1, stderr: `${id} is revoked: there is nothing to update\n` });
      expect(await flagOf()).toBe('on');
    },
    SLOW,
  );

  it(
    'explains its usage, and refuses bad arguments with exit code 2 and unknown ids with 1',
    async () => {
      const help = await keys(['--help']);
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(/^Usage: npm run keys -- create --name <text>/);
      expect(help.stdout).toContain('revoke <id>');
      expect(help.stdout).toContain('update <id> --documents-only on|off');

      for (const [args, message] of [
        [[], 'Say what to do: create, list, update or revoke'],
        [['rotate'], 'Unknown action: rotate'],
        [['create'], 'create needs --name <text>'],
        [['create', '--name', '  '], 'create needs --name <text>'],
        [['create', '--name', 'a', '--profile-limit', '0'], '--profile-limit must be a number of requests per minute'],
        [['create', '--name', 'a', '--owner-check-limit', '10/hour'], '--owner-check-limit must be'],
        [['revoke'], 'revoke takes one key id'],
        [['list', '--name', 'a'], '--name, --profile-limit and --owner-check-limit go with create'],
        [['list', '--key', 'x'], "Unknown option '--key'"],
        [['update', 'key_x'], 'update needs --documents-only on|off'],
        [['update', 'key_x', '--documents-only', 'yes'], '--documents-only must be on or off (got "yes")'],
        [['update', '--documents-only', 'on'], 'update takes one key id'],
        [['list', '--documents-only'], '--documents-only goes with create or update'],
      ] as const) {
        const result = await keys([...args]);
        expect({ args, code: result.code }).toEqual({ args, code: 2 });
        expect(result.stderr).toContain(message);
        expect(result.stderr).toContain('Usage: npm run keys');
        noStackTrace(result);
      }
      const unknown = await keys(['revoke', 'key_nothere']);
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toBe('No API key has the id "key_nothere" (see `keys list`)\n');
      const unknownUpdate = await keys(['update', 'key_nothere', '--documents-only', 'on']);
      expect(unknownUpdate.code).toBe(1);
      expect(unknownUpdate.stderr).toBe('No API key has the id "key_nothere" (see `keys list`)\n');
    },
    SLOW,
  );

  it.runIf(kind === 'pglite')(
    'says to stop the server first while it holds the embedded database',
    async () => {
      const busy = mkdtempSync(path.join(os.tmpdir(), 'nps-keys-'));
      const lock = lockFolder(busy);
      try {
        const result = await runCli('keys', ['create', '--name', 'x'], { env: { DATA_DIR: busy } });
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
