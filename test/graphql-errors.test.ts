/**
 * What clients see when something fails below the resolvers: SERVICE_UNAVAILABLE while the
 * database cannot be reached, INTERNAL_SERVER_ERROR without SQL, parameters or stack for anything
 * unexpected, and logs without private e-mails.
 */
import { rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase } from '../src/db/database.js';
import { eventually } from './support/eventually.js';
import { type GraphQLAnswer, postGraphQL } from './support/graphql-client.js';
import { type GraphQLTestService, serviceOn } from './support/graphql-server.js';
import { subscribeOverWebSocket, webSocketClient } from './support/live-clients.js';
import { type CapturedLog, captureLog } from './support/log-capture.js';
import { metricTotal } from './support/metrics.js';
import { copyOfTemplate } from './support/pglite-templates.js';

const SECRET_EMAIL = 'secret.probe@private.example';

/** A port on 127.0.0.1 where nothing listens. */
async function deadPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const opened: DatabaseHandle[] = [];

/** A database handle whose server is not there (closed after the test). */
async function unreachableDatabase(): Promise<DatabaseHandle> {
  const database = await openDatabase({
    url: `postgres://postgres@127.0.0.1:${await deadPort()}/none`,
    dataDir: '',
    connectTimeoutSeconds: 1,
  });
  opened.push(database);
  return database;
}
const services: Array<Promise<GraphQLTestService>> = [];
afterEach(async () => {
  await Promise.all(services.splice(0).map(async (service) => (await service).close()));
  await Promise.all(opened.splice(0).map((handle) => handle.close()));
});

function clientOn(database: DatabaseHandle, log: CapturedLog, nodeEnv: 'production' | 'test') {
  const service = serviceOn(database, { NODE_ENV: nodeEnv }, log.logger);
  services.push(service);
  return async (query: string): Promise<GraphQLAnswer> => postGraphQL(fetch, (await service).graphqlUrl, query);
}

/** A query per loader, and the data left when its field fails (`profiles` is the non-null one). */
const QUERIES: Record<string, [string, unknown]> = {
  profile: ['{ profile(name: "demo@me") { name } }', { profile: null }],
  profiles: ['{ profiles(names: ["demo@me"]) { name } }', null],
  ownerCheck: [`{ ownerCheck(email: "${SECRET_EMAIL}", name: "demo@me") { hasCreated } }`, { ownerCheck: null }],
};

/** What SQL, a stack trace or a driver message would look like in a response. */
const LEAK = /select |from "|\bat .*:\d+|stack|postgres/i;

describe('database unreachable', () => {
  it.each(Object.entries(QUERIES))('answers %s with SERVICE_UNAVAILABLE', async (_field, [query, data]) => {
    const database = await unreachableDatabase();
    const log = captureLog();
    const { status, body, text } = await clientOn(database, log, 'production')(query);

    expect(status).toBe(200);
    expect(body.data).toEqual(data);
    expect(body.errors).toHaveLength(1);
    expect(body.errors![0]).toMatchObject({
      message: 'Service unavailable',
      extensions: { code: 'SERVICE_UNAVAILABLE' },
    });
    expect(body.errors![0]!.extensions).toEqual({ code: 'SERVICE_UNAVAILABLE', retryAfter: 5 });
    expect(text).not.toMatch(LEAK);
    expect(text).not.toContain(SECRET_EMAIL);
    expect(JSON.stringify(log.lines)).not.toContain(SECRET_EMAIL);
  });
});

describe('database unreachable, over graphql-ws', () => {
  it('answers a query with SERVICE_UNAVAILABLE as over HTTP, and keeps the connection and a subscription open', async () => {
    const database = await unreachableDatabase();
    const log = captureLog();
    const service = await serviceOn(database, { NODE_ENV: 'production' }, log.logger);
    services.push(Promise.resolve(service));
    const client = webSocketClient(service.url);
    /** Everything one operation sends, until it completes. */
    const run = (query: string) =>
      new Promise<unknown[]>((resolve, reject) => {
        const results: unknown[] = [];
        client.subscribe(
          { query },
          { next: (result) => results.push(result), error: reject, complete: () => resolve(results) },
        );
      });
    try {
      // Without Yoga's `http` extension (the 503's Retry-After), which the HTTP answer takes off too.
      const query = await run('{ profile(name: "demo@me") { name } }');
      expect(query).toEqual([
        {
          errors: [
            {
              message: 'Service unavailable',
              locations: [{ line: 1, column: 3 }],
              path: ['profile'],
              extensions: { code: 'SERVICE_UNAVAILABLE', retryAfter: 5 },
            },
          ],
          data: { profile: null },
        },
      ]);
      expect(JSON.stringify(query)).not.toMatch(LEAK);

      // A subscription is admitted and waits: the change log is read again every second until the
      // database answers (docs/live-updates.md), and nothing is sent meanwhile.
      const events = subscribeOverWebSocket(client, ['demo@me']);
      await eventually(
        () => log.find('warn', 'live updates: reading changes failed').length >= 3,
        'three failed reads of the change log, each logged',
      );
      expect(await metricTotal(service.url, 'live_watched_names')).toBe(1);
      expect(events.events).toEqual([]);
      expect(events.errors).toEqual([]);
      // The same connection still answers what needs no database.
      expect(await run('{ __typename }')).toEqual([{ data: { __typename: 'Query' } }]);
    } finally {
      await client.dispose();
    }
  });
});

describe('unexpected failure (tables missing)', () => {
  /**
   * A copy of a new database (initdb in WebAssembly is what costs), in memory without the
   * templates; one for the tests below, whose statements all fail and so change nothing.
   */
  let database: DatabaseHandle | undefined;
  let copy: string | undefined;
  beforeAll(async () => {
    copy = copyOfTemplate('empty');
    database = await openDatabase({ url: undefined, dataDir: copy ?? 'memory://' });
  });
  afterAll(async () => {
    await database?.close();
    if (copy !== undefined) rmSync(copy, { recursive: true, force: true });
  });
  const unmigrated = (): DatabaseHandle => {
    if (database === undefined) throw new Error('the database is used before beforeAll ran');
    return database;
  };

  it.each(Object.entries(QUERIES))(
    'masks %s as INTERNAL_SERVER_ERROR in production, logging a sanitised line',
    async (_field, [query, data]) => {
      const log = captureLog();
      const { body, text } = await clientOn(unmigrated(), log, 'production')(query);

      expect(body.data).toEqual(data);
      expect(body.errors).toEqual([
        {
          message: 'Internal server error',
          locations: [expect.any(Object)],
          path: expect.any(Array),
          extensions: { code: 'INTERNAL_SERVER_ERROR' },
        },
      ]);
      expect(text).not.toMatch(LEAK);
      expect(text).not.toContain(SECRET_EMAIL);

      const errors = log.lines.filter((line) => line.level >= 50);
      expect(errors.length).toBeGreaterThan(0);
      expect(JSON.stringify(errors)).toContain('does not exist');
      expect(JSON.stringify(log.lines)).not.toContain(SECRET_EMAIL);
      expect(JSON.stringify(log.lines)).not.toMatch(/select /i);
    },
  );

  it('adds a sanitised detail outside production, still without SQL or parameters', async () => {
    const log = captureLog();
    const { body, text } = await clientOn(unmigrated(), log, 'test')(QUERIES.ownerCheck![0]);
    expect(body.errors![0]!.extensions).toMatchObject({ code: 'INTERNAL_SERVER_ERROR' });
    expect(String(body.errors![0]!.extensions!.detail)).toContain('does not exist');
    expect(text).not.toMatch(/select |from "/i);
    expect(text).not.toContain(SECRET_EMAIL);
  });
});
