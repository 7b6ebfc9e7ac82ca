/**
 * Tracing (docs/operations.md "Tracing"): with an OTLP endpoint set, the service exports a SERVER
 * span per request — the child of the caller's span when the request carries a `traceparent` —,
 * within it a span per executed GraphQL operation on both GraphQL HTTP paths, and a CLIENT span
 * per SQL statement, the child of the operation (GraphQL) or of the request (REST). The spans are
 * received here by an OTLP/HTTP receiver the test starts, in the JSON protocol, and scanned for
 * the private parts of the requests: no e-mail, query string or body may appear in them. With
 * tracing off, no OpenTelemetry module is loaded at all (checked in a child process).
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importLines } from '../src/data/importer.js';
import { seedDemoData } from '../src/data/seed.js';
import { summarizeStatement } from '../src/db/statement-summary.js';
import type { GraphQLHttpPath } from '../src/graphql/transport/over-http.js';
import { FINAL_EXPORT_TIMEOUT_MS } from '../src/ops/tracing-sdk.js';
import { startTestServer, type TestServer } from './support/app-server.js';
import { ndjson } from './support/data-files.js';
import { databaseKinds, useTestDatabase } from './support/databases.js';
import { type ImageOrigin, serve, startImageOrigin, transparentPng } from './support/image-origin.js';
import { OTLP_KIND, type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from './support/otlp-receiver.js';
import { copyOfTemplate } from './support/pglite-templates.js';
import { runNode } from './support/run-node.js';

/** A namespace owner's e-mail in the demo data: private, and sent by the owner checks below. */
const OWNER_EMAIL = 'owner@example.com';

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

function childrenOf(spans: ReceivedSpan[], parent: ReceivedSpan): ReceivedSpan[] {
  return spans.filter((span) => span.traceId === parent.traceId && span.parentSpanId === parent.spanId);
}

function serverSpan(spans: ReceivedSpan[], traceId: string): ReceivedSpan {
  const found = spans.filter((span) => span.traceId === traceId && span.kind === OTLP_KIND.SERVER);
  expect(found).toHaveLength(1);
  return found[0] as ReceivedSpan;
}

function expectStatementSpans(statements: ReceivedSpan[]): void {
  expect(statements.length).toBeGreaterThan(0);
  for (const statement of statements) {
    expect(statement.kind).toBe(OTLP_KIND.CLIENT);
    expect(statement.attributes['db.system.name']).toBe('postgresql');
    expect(statement.name).toBe(statement.attributes['db.query.summary']);
    expect(statement.name).toMatch(/^SELECT( [a-z_]+)+$/);
  }
}

/** Every request gets a trace of its own, named by the traceparent the test sends. */
function traceparent(): { header: string; traceId: string; parentSpanId: string } {
  const traceId = hex(16);
  const parentSpanId = hex(8);
  return { header: `00-${traceId}-${parentSpanId}-01`, traceId, parentSpanId };
}

describe.each(databaseKinds())('tracing on %s', (kind) => {
  const database = useTestDatabase(kind, seedDemoData);

  describe.each<GraphQLHttpPath>(['service', 'yoga'])('GraphQL answered by the %s path', (graphqlHttpPath) => {
    let receiver: OtlpReceiver;
    let server: TestServer;
    /** Everything private the requests sent: none of it may be in a span. */
    const sent: string[] = [OWNER_EMAIL];

    beforeAll(async () => {
      receiver = await startOtlpReceiver();
      server = await startTestServer(
        database.handle,
        {
          OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
          OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
          OTEL_SERVICE_NAME: 'traced-profiles',
          // Every lookup reaches the database.
          PROFILE_CACHE_SIZE: '0',
        },
        undefined,
        { graphqlHttpPath },
      );
    });
    afterAll(async () => {
      await server?.close();
      await receiver?.close();
    });

    async function get(path: string, trace = traceparent()): Promise<string> {
      const response = await fetch(`${server.url}${path}`, { headers: { traceparent: trace.header } });
      await response.arrayBuffer();
      return trace.traceId;
    }

    async function postGraphQL(body: object, trace = traceparent()): Promise<string> {
      const text = JSON.stringify(body);
      sent.push(text);
      const response = await fetch(`${server.url}/graphql`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', traceparent: trace.header },
        body: text,
      });
      expect(response.status).toBe(200);
      await response.arrayBuffer();
      return trace.traceId;
    }

    async function receivedSpans(): Promise<ReceivedSpan[]> {
      await server.app.tracing?.flush();
      return receiver.spans();
    }

    it('makes a REST request a SERVER span, the child of the traceparent, with its statements as children', async () => {
      const trace = traceparent();
      await get('/api/demo@me', trace);
      const spans = await receivedSpans();
      const request = serverSpan(spans, trace.traceId);
      expect(request).toMatchObject({
        name: 'GET /api/:name',
        parentSpanId: trace.parentSpanId,
        attributes: { 'http.request.method': 'GET', 'http.route': '/api/:name', 'http.response.status_code': 200 },
        resource: { 'service.name': 'traced-profiles' },
      });
      expectStatementSpans(childrenOf(spans, request));
      if (kind === 'postgres') {
        expect(childrenOf(spans, request)[0]?.attributes).toMatchObject({ 'server.address': expect.any(String) });
      }
    });

    it('makes a GraphQL operation a span between the request and its statements', async () => {
      const traceId = await postGraphQL({
        query: 'query TracedLookup($name: String!) { profile(name: $name) { name description } }',
        variables: { name: 'demo@me' },
      });
      const spans = await receivedSpans();
      const request = serverSpan(spans, traceId);
      expect(request).toMatchObject({
        name: 'POST /graphql',
        attributes: { 'http.request.method': 'POST', 'http.route': '/graphql', 'http.response.status_code': 200 },
      });
      const operations = childrenOf(spans, request);
      expect(operations).toMatchObject([
        {
          name: 'query TracedLookup',
          kind: OTLP_KIND.INTERNAL,
          attributes: { 'graphql.operation.name': 'TracedLookup', 'graphql.operation.type': 'query' },
        },
      ]);
      expectStatementSpans(childrenOf(spans, operations[0] as ReceivedSpan));
    });

    it('makes a request without traceparent the root of its own trace', async () => {
      const response = await fetch(
        `${server.url}/graphql?query=${encodeURIComponent('{ profile(name: "demo@me") { name } }')}`,
      );
      expect(response.status).toBe(200);
      await response.arrayBuffer();
      const spans = await receivedSpans();
      const roots = spans.filter((span) => span.name === 'GET /graphql' && span.parentSpanId === undefined);
      expect(roots).toHaveLength(1);
      const operations = childrenOf(spans, roots[0] as ReceivedSpan);
      expect(operations).toMatchObject([{ name: 'query', attributes: { 'graphql.operation.type': 'query' } }]);
      expect(operations[0]?.attributes['graphql.operation.name']).toBeUndefined();
      expectStatementSpans(childrenOf(spans, operations[0] as ReceivedSpan));
    });

    it('puts no e-mail, query string or body into a span', async () => {
      const query = `email=${encodeURIComponent(OWNER_EMAIL)}&name=demo@me`;
      sent.push(query);
      const rest = await get(`/api/owner-check?${query}`);
      const document = `{ ownerCheck(email: "${OWNER_EMAIL}", name: "demo@me") { hasCreated } }`;
      sent.push(document);
      const graphqlGet = await get(`/graphql?query=${encodeURIComponent(document)}`);
      const graphqlPost = await postGraphQL({
        query: 'query Owner($email: String, $name: String) { ownerCheck(email: $email, name: $name) { hasCreated } }',
        variables: { email: OWNER_EMAIL, name: 'demo@me' },
      });
      const spans = await receivedSpans();
      expectStatementSpans(childrenOf(spans, serverSpan(spans, rest)));
      for (const traceId of [graphqlGet, graphqlPost]) {
        const [operation] = childrenOf(spans, serverSpan(spans, traceId));
        expectStatementSpans(childrenOf(spans, operation as ReceivedSpan));
      }
      const exported = receiver.exports.map((received) => received.body.toString('utf8').toLowerCase()).join('\n');
      for (const secret of sent) expect(exported).not.toContain(secret.toLowerCase());
      expect(exported).not.toContain(encodeURIComponent(OWNER_EMAIL).toLowerCase());
      expect(exported).not.toContain('example.com');
    });
  });
});

describe('tracing in the default protocol (http/protobuf)', () => {
  const database = useTestDatabase('pglite', seedDemoData);
  let receiver: OtlpReceiver;
  let server: TestServer;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    server = await startTestServer(database.handle, {
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/custom/traces`,
      PROFILE_CACHE_SIZE: '0',
    });
  });
  afterAll(async () => {
    await server?.close();
    await receiver?.close();
  });

  it('posts protobuf to the traces endpoint as configured', async () => {
    const response = await fetch(`${server.url}/api/owner-check?email=${OWNER_EMAIL}&name=demo@me`);
    await response.arrayBuffer();
    await server.app.tracing?.flush();
    expect(receiver.exports.length).toBeGreaterThan(0);
    for (const exported of receiver.exports) {
      expect(exported).toMatchObject({ path: '/custom/traces', contentType: 'application/x-protobuf' });
    }
    const bytes = Buffer.concat(receiver.exports.map((exported) => exported.body)).toString('latin1');
    for (const text of ['GET /api/owner-check', 'name-profile-service', 'postgresql', 'SELECT']) {
      expect(bytes).toContain(text);
    }
    expect(bytes).not.toContain(OWNER_EMAIL);
  });
});

describe('tracing avatar origin fetches', () => {
  const database = useTestDatabase('pglite', seedDemoData);
  let receiver: OtlpReceiver;
  let origin: ImageOrigin;
  let server: TestServer;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    origin = await startImageOrigin('127.0.0.1');
    origin.route('/private-path-of-the-image.png', serve(await transparentPng(), 'image/png'));
    origin.route('/page.png', serve('<!doctype html><title>not an image</title>', 'image/png'));
    const lines = ndjson(
      {
        kind: 'profile',
        name: 'traced-pic@me',
        creatorEmail: 'x@example.com',
        image: `${origin.url}/private-path-of-the-image.png`,
      },
      { kind: 'profile', name: 'traced-page@me', creatorEmail: 'x@example.com', image: `${origin.url}/page.png` },
      {
        kind: 'profile',
        name: 'traced-refused@me',
        creatorEmail: 'x@example.com',
        image: 'http://169.254.169.254/x.png',
      },
    );
    expect((await importLines(database.handle.db, lines)).problems).toEqual([]);
    server = await startTestServer(database.handle, {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      AVATAR_PROXY: 'on',
      AVATAR_PRIVATE_ORIGINS: '127.0.0.1/32',
      // Bounds this test is not about, out of reach of a loaded machine.
      AVATAR_FETCH_TIMEOUT_MS: '60000',
      AVATAR_RESIZES_PER_SECOND: '0',
      PROFILE_CACHE_SIZE: '0',
    });
  });
  afterAll(async () => {
    await server?.close();
    await receiver?.close();
    await origin?.close();
  });

  it('makes each origin fetch a CLIENT span of the request, with host, port and outcome, never the URL', async () => {
    const outcomes: Record<string, ReceivedSpan | undefined> = {};
    for (const [name, outcome] of [
      ['traced-pic@me', 'ok'],
      ['traced-refused@me', 'refused-address'],
      // Fetched whole, but not an image: the outcome is known once its bytes are looked at.
      ['traced-page@me', 'not-image'],
    ] as const) {
      const trace = traceparent();
      const response = await fetch(`${server.url}/api/${name}/avatar?size=32`, {
        headers: { traceparent: trace.header },
      });
      await response.arrayBuffer();
      await server.app.tracing?.flush();
      const spans = await receiver.spans();
      outcomes[outcome] = childrenOf(spans, serverSpan(spans, trace.traceId)).find(
        (span) => span.name === 'avatar origin fetch',
      );
    }
    expect(outcomes.ok).toMatchObject({
      kind: OTLP_KIND.CLIENT,
      attributes: {
        'http.request.method': 'GET',
        'server.address': '127.0.0.1',
        'server.port': origin.port,
        'avatar.fetch.outcome': 'ok',
      },
    });
    expect(outcomes.ok?.status?.code ?? 0).not.toBe(2);
    expect(outcomes['refused-address']).toMatchObject({
      attributes: {
        'server.address': '169.254.169.254',
        'avatar.fetch.outcome': 'refused-address',
        'error.type': 'refused-address',
      },
      status: { code: 2 },
    });
    expect(outcomes['not-image']).toMatchObject({
      attributes: { 'server.address': '127.0.0.1', 'avatar.fetch.outcome': 'not-image', 'error.type': 'not-image' },
      status: { code: 2 },
    });
    expect(JSON.stringify(await receiver.spans())).not.toContain('private-path-of-the-image');
  });
});

describe('statement summaries', () => {
  it('name the operation and tables, never literals', () => {
    expect(summarizeStatement('select "name" from "profiles" left join "records" on x where "name" = any($1)')).toEqual(
      {
        summary: 'SELECT profiles records',
        operation: 'SELECT',
        collection: undefined,
      },
    );
    expect(summarizeStatement(`insert into "public"."profiles" ("name") values ('secret@from.example')`)).toEqual({
      summary: 'INSERT profiles',
      operation: 'INSERT',
      collection: 'profiles',
    });
    expect(summarizeStatement(`select extract(epoch from now()) -- from leaked`).summary).toBe('SELECT');
    expect(summarizeStatement(`select 1 from "na me"`).summary).toBe('SELECT');
  });
});

/**
 * A child process starts the App, serves a REST and a GraphQL request, and lists every
 * @opentelemetry module it resolved, with the module outside @opentelemetry that imported it
 * (`from`: where OpenTelemetry was entered). With tracing on the same script must see the SDK,
 * which shows that the check sees what is loaded.
 */
const MODULE_CHECK = `
import { registerHooks } from 'node:module';
const root = 'file://' + process.cwd() + '/';
const shortly = (url) => url.replace(root, '').replace(/^.*node_modules\\//, '');
const loaded = [];
registerHooks({
  resolve(specifier, context, nextResolve) {
    const resolved = nextResolve(specifier, context);
    const parent = context.parentURL ?? '';
    if (resolved.url.includes('@opentelemetry')) {
      loaded.push({ module: shortly(resolved.url), from: parent.includes('@opentelemetry') ? undefined : shortly(parent) });
    }
    return resolved;
  },
});
const { createApp } = await import('./src/app.ts');
const { loadConfig } = await import('./src/config/config.ts');
const { openDatabase } = await import('./src/db/database.ts');
const { listen } = await import('./src/http/server.ts');
const { createLogger } = await import('./src/logging/logger.ts');
const database = await openDatabase({ url: undefined, dataDir: process.env.CHECK_DATA_DIR ?? 'memory://' });
await database.migrate();
const env = JSON.parse(process.env.CHECK_ENV);
const config = loadConfig({ NODE_ENV: 'test', PORT: '0', ...env });
const app = await createApp(config, createLogger('silent', { pretty: false }), { database });
const running = await listen(app, 0, '127.0.0.1');
await (await fetch(running.url + '/api/demo@me')).arrayBuffer();
await (await fetch(running.url + '/graphql?query=%7B__typename%7D')).arrayBuffer();
const closing = Date.now();
await running.close();
const closeMs = Date.now() - closing;
await database.close();
process.stdout.write(JSON.stringify({ loaded, closeMs }));
// Without a collector the exporter would go on retrying the last spans for a while.
process.exit(0);
`;

interface LoadedModule {
  module: string;
  /** The importer, when it is not itself an OpenTelemetry module. */
  from: string | undefined;
}

async function openTelemetryModulesLoaded(
  env: Record<string, string>,
): Promise<{ loaded: LoadedModule[]; closeMs: number }> {
  const previous = process.env.CHECK_ENV;
  process.env.CHECK_ENV = JSON.stringify(env);
  // A copy of a new database spares the child initdb in WebAssembly, the costly part of its start.
  const dataDir = copyOfTemplate('empty');
  if (dataDir !== undefined) process.env.CHECK_DATA_DIR = dataDir;
  try {
    const result = await runNode(['--import', 'tsx'], MODULE_CHECK);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    return JSON.parse(result.stdout) as { loaded: LoadedModule[]; closeMs: number };
  } finally {
    if (previous === undefined) delete process.env.CHECK_ENV;
    else process.env.CHECK_ENV = previous;
    delete process.env.CHECK_DATA_DIR;
    if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true });
  }
}

/** A child process that loads the whole service takes a while on a busy machine. */
const CHILD_TIMEOUT_MS = 90_000;

describe('tracing off', { timeout: CHILD_TIMEOUT_MS }, () => {
  it('loads no OpenTelemetry module of its own: only the API that prom-client requires', async () => {
    const { loaded } = await openTelemetryModulesLoaded({});
    // prom-client's default metrics require @opentelemetry/api (for exemplars, which are not used);
    // with no SDK registered it is the API's no-op. Nothing of the service enters OpenTelemetry.
    const entries = loaded.filter((entry) => entry.from !== undefined);
    expect(entries.length).toBeGreaterThan(0);
    for (const entry of entries)
      expect(entry).toMatchObject({
        module: expect.stringMatching(/^@opentelemetry\/api\//),
        from: expect.stringMatching(/^prom-client\//),
      });
    for (const { module } of loaded) expect(module).toMatch(/^@opentelemetry\/api\//);
  });

  it('is what the check above would see if it were on, where a collector away does not hold up a stop', async () => {
    // A port nothing listens on: the export fails (and is logged), the modules are loaded all the same.
    const { loaded, closeMs } = await openTelemetryModulesLoaded({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' });
    expect(closeMs).toBeLessThan(FINAL_EXPORT_TIMEOUT_MS + 2000);
    expect(loaded).toContainEqual({
      module: expect.stringMatching(/^@opentelemetry\/sdk-trace\//),
      from: 'src/ops/tracing-sdk.ts',
    });
  });
});
