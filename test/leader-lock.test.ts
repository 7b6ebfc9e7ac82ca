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
import { eventually } from './support/eventually.js';

/**
 * A contender's session that counts the statements it was asked: one a check. A contender starts
 * a check only once its previous one has finished (and its outcome was taken), so two more
 * started checks mean one more whole check.
 */
function countingSession(session: postgres.Sql, counted: { checks: number }): postgres.Sql {
  return new Proxy(session, {
    apply(target, thisArgument, args) {
      counted.checks += 1;
      return Reflect.apply(target, thisArgument, args);
    },
  });
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
  const contenders: Array<{ name: string; leadership: Leadership; events: string[]; counted: { checks: number } }> = [];

  beforeAll(async () => {
    testDb = await createTestDatabase('postgres');
    for (const name of ['contender-a', 'contender-b']) {
      const events: string[] = [];
      const counted = { checks: 0 };
      const leadership = advisoryLeadership(
        {
          // The service's own session (src/db/database.ts connects its leadership the same way).
          connect: () =>
            countingSession(
              singleSession(testDb.url as string, { connectTimeoutSeconds: 5, poolMode: 'session' }, name),
              counted,
            ),
          key: 99,
          intervalMs: 100,
        },
        { lead: () => events.push('lead'), follow: (reason) => events.push(`follow: ${reason}`) },
      );
      contenders.push({ name, leadership, events, counted });
    }
  });
  afterAll(async () => {
    for (const contender of contenders) await contender.leadership.close();
    await testDb?.drop();
  });

  const leaders = () => contenders.filter((contender) => contender.leadership.leading);

  /** Until every contender has made two more whole checks (tries of the lock, or checks that it still holds it). */
  async function everyoneCheckedAgain(): Promise<void> {
    const from = contenders.map((contender) => contender.counted.checks);
    await eventually(() => contenders.every((contender, index) => contender.counted.checks >= (from[index] ?? 0) + 3), {
      what: 'two more checks by every contender',
      withinMs: 5000,
    });
  }

  it('elects exactly one, and another when the leader’s session is cut or closed', async () => {
    await eventually(() => leaders().length === 1, { what: 'a leader', withinMs: 5000 });
    // The follower tried the lock again meanwhile, and did not get it.
    await everyoneCheckedAgain();
    expect(leaders()).toHaveLength(1);
    const first = leaders()[0];
    if (first === undefined) throw new Error('no leader');

    // Cut the leader's session on the server: the driver reconnects, but the new session holds no lock.
    const admin = postgres(testDb.url as string, { max: 1, onnotice: () => {} });
    await admin`select pg_terminate_backend(pid) from pg_stat_activity where application_name = ${first.name}`;
    await admin.end();
    await eventually(() => !first.leadership.leading, { what: 'the cut leader to step down', withinMs: 3000 });
    expect(first.events.at(-1)).toMatch(/^follow: /);
    await eventually(() => leaders().length === 1, { what: 'a new leader', withinMs: 3000 });
    const second = leaders()[0];
    if (second === undefined) throw new Error('no leader');
    await everyoneCheckedAgain();
    expect(leaders()).toHaveLength(1);

    // A leader that closes releases the lock with its session.
    await second.leadership.close();
    const others = contenders.filter((contender) => contender !== second);
    await eventually(() => others.some((contender) => contender.leadership.leading), {
      what: 'a leader after close',
      withinMs: 3000,
    });
  });
});
