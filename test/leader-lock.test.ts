/**
 * The leader election of src/db/leader-lock.ts on PostgreSQL (the purger's leader): one of the
 * contenders leads; a leader whose session is cut (terminated on the server, and silently
 * reconnected by the driver, without the lock) steps down, and another takes over; a leader that
 * closes hands over within the check interval. On PGlite the one process leads.
 */
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { advisoryLeadership, type Leadership, soleLeadership } from '../src/db/leader-lock.js';
import { singleSession } from '../src/db/postgres-client.js';
import { createTestDatabase, type TestDatabase } from './support/databases.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

describe('leadership on PGlite', () => {
  it('leads from the start', () => {
    const events: string[] = [];
    const leadership = soleLeadership({ lead: () => events.push('lead'), follow: () => events.push('follow') });
    expect(leadership.leading).toBe(true);
    expect(events).toEqual(['lead']);
  });
});

describe.skipIf(process.env.TEST_DATABASE_URL === undefined)('leadership through an advisory lock', () => {
  let testDb: TestDatabase;
  const contenders: Array<{ name: string; leadership: Leadership; events: string[] }> = [];

  beforeAll(async () => {
    testDb = await createTestDatabase('postgres');
    for (const name of ['contender-a', 'contender-b']) {
      const events: string[] = [];
      const leadership = advisoryLeadership(
        {
          // The service's own session (src/db/database.ts connects its leadership the same way).
          connect: () => singleSession(testDb.url as string, { connectTimeoutSeconds: 5, poolMode: 'session' }, name),
          key: 99,
          intervalMs: 100,
        },
        { lead: () => events.push('lead'), follow: (reason) => events.push(`follow: ${reason}`) },
      );
      contenders.push({ name, leadership, events });
    }
  });
  afterAll(async () => {
    for (const contender of contenders) await contender.leadership.close();
    await testDb?.drop();
  });

  const leaders = () => contenders.filter((contender) => contender.leadership.leading);

  it('elects exactly one, and another when the leader’s session is cut or closed', async () => {
    await until(() => leaders().length === 1, 5000, 'a leader');
    await sleep(400);
    expect(leaders()).toHaveLength(1);
    const first = leaders()[0];
    if (first === undefined) throw new Error('no leader');

    // Cut the leader's session on the server: the driver reconnects, but the new session holds no lock.
    const admin = postgres(testDb.url as string, { max: 1, onnotice: () => {} });
    await admin`select pg_terminate_backend(pid) from pg_stat_activity where application_name = ${first.name}`;
    await admin.end();
    await until(() => !first.leadership.leading, 3000, 'the cut leader to step down');
    expect(first.events.at(-1)).toMatch(/^follow: /);
    await until(() => leaders().length === 1, 3000, 'a new leader');
    const second = leaders()[0];
    if (second === undefined) throw new Error('no leader');
    await sleep(300);
    expect(leaders()).toHaveLength(1);

    // A leader that closes releases the lock with its session.
    await second.leadership.close();
    const others = contenders.filter((contender) => contender !== second);
    await until(() => others.some((contender) => contender.leadership.leading), 3000, 'a leader after close');
  });
});
