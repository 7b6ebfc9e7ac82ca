/**
 * System tier (needs Redis): an API key's limits are one budget across servers sharing a Redis,
 * like the per-IP ones. Two Apps in this process, each with its own Redis connection, as two
 * server processes have. Fails, naming Redis, when TEST_REDIS_URL is not set.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedDemoData } from '../src/data/seed.js';
import { createKey } from './support/api-keys.js';
import { startTestServer, type TestServer } from './support/app-server.js';
import { useTestDatabase } from './support/databases.js';
import { eventually } from './support/eventually.js';
import { type CapturedLog, captureLog } from './support/log-capture.js';

const REDIS_URL = process.env.TEST_REDIS_URL;

describe('API key limits shared through Redis', () => {
  const suite = useTestDatabase('pglite', (db) => seedDemoData(db));
  const servers: TestServer[] = [];

  beforeAll(async () => {
    if (REDIS_URL === undefined) {
      throw new Error(
        'This suite needs Redis: start redis-server (apt-get install redis-server) and set TEST_REDIS_URL=redis://127.0.0.1:6379',
      );
    }
    const env = { REDIS_URL, RATE_LIMIT_PREFIX: `test:${randomUUID()}`, OWNER_CHECK_LIMIT: '1' };
    const logs: CapturedLog[] = [];
    for (let i = 0; i < 2; i += 1) {
      const log = captureLog();
      logs.push(log);
      servers.push(await startTestServer(suite.handle, env, log.logger));
    }
    // Until its Redis connection is up, a server counts in its own memory.
    await eventually(
      () => logs.every((log) => log.find('info', 'rate limits are kept in Redis').length === 1),
      'both servers on Redis',
    );
  });
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.close()));
  });

  it('counts a key once across both servers, with its own limit, apart from the per-IP budget', async () => {
    const { key } = await createKey(suite.handle, { ownerCheckLimit: 4 });
    const check = (server: TestServer | undefined, headers: Record<string, string> = {}) =>
      fetch(`${server?.url}/api/owner-check?email=maker@example.com&name=demo@me`, { headers });
    const [first, second] = servers;
    expect((await check(first)).status).toBe(200);
    expect((await check(second)).status).toBe(429);

    const answers = [];
    for (let i = 0; i < 5; i += 1) answers.push(await check(i % 2 === 0 ? first : second, { 'x-api-key': key }));
    expect(answers.map((response) => response.status)).toEqual([200, 200, 200, 200, 429]);
    expect(answers.map((response) => response.headers.get('ratelimit-remaining'))).toEqual(['3', '2', '1', '0', '0']);
    expect(answers.every((response) => response.headers.get('ratelimit-limit') === '4')).toBe(true);
  });
});
