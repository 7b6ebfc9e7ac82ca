/**
 * Why the configured database could not be opened, in terms of the setting to fix. The CLI
 * suite (data-cli.test.ts) shows the causes a test can produce for real (refused, missing
 * database, unknown user, a file as DATA_DIR, a folder in use); these are the ones it cannot
 * (a read-only file system, root ignoring permissions, DNS, a wrong password under trust auth).
 */
import { describe, expect, it } from 'vitest';
import { explainOpenFailure } from '../src/db/open-configured.js';

const postgresConfig = {
  databaseUrl: 'postgres://app:secret@db.internal:6432/names',
  dataDir: '/unused',
  dbConnectTimeoutSeconds: 5,
};
const embeddedConfig = { databaseUrl: undefined, dataDir: '/srv/names', dbConnectTimeoutSeconds: 5 };

/** An error as Node or the driver makes it, wrapped the way Drizzle wraps it. */
function failure(fields: Record<string, unknown>): Error {
  const cause = Object.assign(new Error(String(fields.message ?? 'failed')), fields);
  return new Error('Failed query: select 1', { cause });
}

describe('explainOpenFailure', () => {
  it.each([
    [{ code: 'ENOTFOUND' }, 'the host "db.internal" is unknown. Check the host name in DATABASE_URL.'],
    [
      { code: 'CONNECT_TIMEOUT' },
      'no answer from db.internal:6432 within 5 s. Check the host and port in DATABASE_URL, and the network.',
    ],
    [
      { code: '28P01', message: 'password authentication failed for user "app"' },
      'password authentication failed for user "app". Check the user and password in DATABASE_URL.',
    ],
  ])('names DATABASE_URL for %o', (fields, reason) => {
    const explained = explainOpenFailure(postgresConfig, failure(fields));
    expect(explained?.setting).toBe('DATABASE_URL');
    expect(explained?.message).toBe(
      `The PostgreSQL database postgres://app:***@db.internal:6432/names could not be opened: ${reason}`,
    );
  });

  it.each([
    ['EROFS', '/srv/names is on a read-only file system. Point DATA_DIR at a writable folder.'],
    [
      'EACCES',
      'no permission to write in /srv/names. Point DATA_DIR at a folder this user may write, or fix its permissions.',
    ],
  ])('names DATA_DIR for %s', (code, reason) => {
    const explained = explainOpenFailure(embeddedConfig, Object.assign(new Error(code), { code }));
    expect(explained?.setting).toBe('DATA_DIR');
    expect(explained?.message).toBe(`The embedded database in /srv/names could not be opened: ${reason}`);
  });

  it('leaves causes alone that no setting fixes', () => {
    expect(explainOpenFailure(postgresConfig, failure({ code: '42P07', message: 'relation exists' }))).toBeUndefined();
    expect(explainOpenFailure(embeddedConfig, new Error('PGlite aborted'))).toBeUndefined();
  });
});
