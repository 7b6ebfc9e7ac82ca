/**
 * Trusted documents (GraphQL-over-HTTP Appendix A) and documents-only API keys, on every GraphQL
 * transport: `documentId` in a POST body and a GET query string, a subscription by id over SSE
 * (graphql-sse's client) and graphql-ws (its client), manifests in both forms, the errors of the
 * contract, and a documents-only key refused a `query` everywhere while its ids run. Runs on both
 * GraphQL HTTP paths (vitest.config.ts, GRAPHQL_SUITES).
 */
import { hash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createClient as createSseClient, type RequestParams } from 'graphql-sse';
import { createClient as createWsClient, type SubscribePayload } from 'graphql-ws';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { importLines } from '../src/data/importer.js';
import { setApiKeyDocumentsOnly } from '../src/db/api-key-queries.js';
import { MAX_SILENCE_MS } from '../src/db/change-feed.js';
import type { DatabaseHandle } from '../src/db/database.js';
import { createKey, type TestKey } from './support/api-keys.js';
import { GRAPHQL_PATH_RERUN, startTestServer, type TestServer } from './support/app-server.js';
import { ndjson } from './support/data-files.js';
import { createTestDatabase, type TestDatabase } from './support/databases.js';
import { eventually } from './support/eventually.js';

const LOOKUP = 'query Lookup($name: String!) { profile(name: $name) { name description } }';
const TWO =
  'query First { profile(name: "ada@trusted") { name } }\nquery Second { profile(name: "bob@trusted") { name } }';
const WATCH =
  'subscription Watch($names: [String!]!) { profileChanged(names: $names) { name profile { description } } }';
const sha = (text: string) => hash('sha256', text, 'hex');
const idOf = (text: string) => `sha256:${sha(text)}`;
const UNKNOWN_ID = idOf('query Unknown { __typename }');

const NAMESPACE = { kind: 'namespace', name: 'trusted', ownerEmail: 'owner@example.com' };
const profile = (local: string, description: string) => ({
  kind: 'profile',
  name: `${local}@trusted`,
  creatorEmail: `${local}@example.org`,
  description,
});

const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/graphql-response+json' };

interface Answer {
  status: number;
  body: { data?: unknown; errors?: Array<{ message: string; extensions?: { code?: string } }> };
}

describe('trusted documents', () => {
  let folder: string;
  let testDb: TestDatabase;
  let handle: DatabaseHandle;
  let server: TestServer;
  let onlyDocuments: TestKey;
  let anyDocument: TestKey;
  let serial = 0;

  beforeAll(async () => {
    folder = mkdtempSync(path.join(os.tmpdir(), 'nps-trusted-'));
    // graphql-codegen's client-preset form, bare hashes; Apollo's manifest, ids as the tool writes them.
    const codegen = path.join(folder, 'persisted-documents.json');
    writeFileSync(codegen, JSON.stringify({ [sha(LOOKUP)]: LOOKUP }));
    const apollo = path.join(folder, 'apollo-manifest.json');
    writeFileSync(
      apollo,
      JSON.stringify({
        format: 'apollo-persisted-query-manifest',
        version: 1,
        operations: [
          { id: sha(TWO), body: TWO, name: 'First', type: 'query' },
          { id: sha(WATCH), body: WATCH, name: 'Watch', type: 'subscription' },
        ],
      }),
    );
    testDb = await createTestDatabase('pglite');
    handle = await testDb.open();
    expect((await importLines(handle.db, ndjson(NAMESPACE, profile('ada', 'First'), profile('bob', 'First')))).ok).toBe(
      true,
    );
    server = await startTestServer(handle, { PERSISTED_DOCUMENTS: `${codegen}, ${apollo}`, PROFILE_LIMIT: '0' });
    await eventually(() => server.app.cache.stats().answering, { what: 'the change feed', withinMs: 10_000 });
    onlyDocuments = await createKey(handle);
    expect(await setApiKeyDocumentsOnly(handle.db, onlyDocuments.id, true)).toBe('updated');
    anyDocument = await createKey(handle);
  }, 60_000);
  // A client's subscriptions close a little after it stops: the next test counts from zero.
  afterEach(async () => {
    await eventually(() => openSubscriptions() === 0, { what: 'every subscription to close', withinMs: 5000 });
  });
  afterAll(async () => {
    await server?.close();
    await handle?.close();
    await testDb?.drop();
    if (folder !== undefined) rmSync(folder, { recursive: true, force: true });
  });

  const post = async (params: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Answer> => {
    const response = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { ...JSON_HEADERS, ...headers },
      body: JSON.stringify(params),
    });
    return { status: response.status, body: (await response.json()) as Answer['body'] };
  };
  const get = async (params: Record<string, string>, headers: Record<string, string> = {}): Promise<Answer> => {
    const response = await fetch(`${server.url}/graphql?${new URLSearchParams(params)}`, {
      headers: { accept: JSON_HEADERS.accept, ...headers },
    });
    return { status: response.status, body: (await response.json()) as Answer['body'] };
  };
  const keyed = (key: TestKey) => ({ authorization: `Bearer ${key.key}` });
  const codeOf = (answer: Answer) => answer.body.errors?.[0]?.extensions?.code;
  const change = async (local: string) => {
    serial += 1;
    expect((await importLines(handle.db, ndjson(profile(local, `Edit ${serial}`)))).ok).toBe(true);
    return `Edit ${serial}`;
  };
  const openSubscriptions = () => {
    const { open } = server.app.live.stats();
    return open.sse + open.websocket;
  };

  it('runs a document by its id in a POST body as the same text sent as query (codegen manifest)', async () => {
    const variables = { name: 'ada@trusted' };
    const byQuery = await post({ query: LOOKUP, variables });
    // Several times: later requests may take the service's prepared path.
    for (let i = 0; i < 3; i += 1) {
      const byId = await post({ documentId: idOf(LOOKUP), variables });
      expect(byId).toEqual(byQuery);
    }
    expect(byQuery.body.data).toEqual({ profile: { name: 'ada@trusted', description: 'First' } });
    // The service's path finds the prepared document by id, as it does by text.
    const { prepared, trusted } = server.app.graphql;
    const found = prepared.find(trusted.asRun({ documentId: idOf(LOOKUP), variables }));
    if (GRAPHQL_PATH_RERUN) expect(found).toBeUndefined();
    else expect(found).toBe(prepared.find({ query: LOOKUP, variables }));
    expect(found === undefined).toBe(GRAPHQL_PATH_RERUN);
  });

  it('runs a document by its id in a GET query string, with its operation name (Apollo manifest)', async () => {
    for (const [operationName, name] of [
      ['First', 'ada@trusted'],
      ['Second', 'bob@trusted'],
    ] as const) {
      const byId = await get({ documentId: idOf(TWO), operationName });
      expect(byId).toEqual({ status: 200, body: { data: { profile: { name } } } });
      expect(await get({ query: TWO, operationName })).toEqual(byId);
    }
    const lookup = await get({ documentId: idOf(LOOKUP), variables: JSON.stringify({ name: 'bob@trusted' }) });
    expect(lookup.body.data).toEqual({ profile: { name: 'bob@trusted', description: expect.any(String) } });
  });

  it('answers an unknown id with 400 and PERSISTED_QUERY_NOT_FOUND, on POST and GET, for any Accept', async () => {
    for (const accept of ['application/graphql-response+json', 'application/json']) {
      for (const answer of [
        await post({ documentId: UNKNOWN_ID }, { accept }),
        await get({ documentId: UNKNOWN_ID }, { accept }),
        await post({ documentId: sha(LOOKUP) }, { accept }),
      ]) {
        expect(answer.status).toBe(400);
        expect(answer.body.data).toBeUndefined();
        expect(answer.body.errors).toEqual([
          { message: 'No persisted document has this documentId', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } },
        ]);
      }
    }
  });

  it('refuses a query and a documentId together with 400, and a documentId that is not a string', async () => {
    for (const answer of [
      await post({ query: LOOKUP, documentId: idOf(LOOKUP), variables: { name: 'ada@trusted' } }),
      await get({ query: LOOKUP, documentId: idOf(LOOKUP), variables: '{"name":"ada@trusted"}' }),
    ]) {
      expect(answer.status).toBe(400);
      expect(answer.body.errors?.[0]?.message).toBe('Send either query or documentId, not both');
      expect(codeOf(answer)).toBe('BAD_REQUEST');
    }
    const wrongType = await post({ documentId: 5 });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.errors?.[0]?.message).toBe('Expected "documentId" param to be a string');
  });

  it('keeps automatic persisted queries working beside them', async () => {
    const text = '{ profile(name: "ada@trusted") { name } }';
    const persistedQuery = { version: 1, sha256Hash: sha(text) };
    const registered = await post({ query: text, extensions: { persistedQuery } });
    expect(registered.body.data).toEqual({ profile: { name: 'ada@trusted' } });
    const byHash = await post({ extensions: { persistedQuery } });
    expect(byHash).toEqual(registered);
  });

  /** A graphql-sse subscription (distinct connections) by id; its first event or its refusal. */
  const sseSubscribe = (params: Record<string, unknown>, headers: Record<string, string> = {}) => {
    const client = createSseClient({ url: `${server.url}/graphql`, retryAttempts: 0, headers });
    const outcome = { events: [] as unknown[], errors: [] as unknown[], ended: false };
    const stop = client.subscribe(params as unknown as RequestParams, {
      next: (result) => {
        if (result.errors !== undefined) outcome.errors.push(...result.errors);
        if (result.data != null) outcome.events.push(result.data);
      },
      error: (error) => {
        // A refusal before the stream starts is an HTTP answer: graphql-sse's NetworkError holds it.
        const response = (error as { response?: Response }).response;
        if (response === undefined) {
          outcome.errors.push(error);
          outcome.ended = true;
          return;
        }
        void response.text().then((body) => {
          outcome.errors.push({ status: response.status, body: JSON.parse(body) });
          outcome.ended = true;
        });
      },
      complete: () => {
        outcome.ended = true;
      },
    });
    return {
      outcome,
      stop: () => {
        stop();
        client.dispose();
      },
    };
  };

  /** A graphql-ws subscription by id (an empty `query`: the protocol wants a string); first event or refusal. */
  const wsSubscribe = (params: Record<string, unknown>, connectionParams?: Record<string, unknown>) => {
    const client = createWsClient({
      url: `${server.url.replace(/^http/, 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      retryAttempts: 0,
      lazy: true,
      connectionParams,
    });
    const outcome = { events: [] as unknown[], errors: [] as unknown[], ended: false };
    client.subscribe({ query: '', ...params } as SubscribePayload, {
      next: (result) => {
        if (result.errors !== undefined) outcome.errors.push(...result.errors);
        if (result.data != null) outcome.events.push(result.data);
      },
      error: (error) => {
        outcome.errors.push(...(Array.isArray(error) ? error : [error]));
        outcome.ended = true;
      },
      complete: () => {
        outcome.ended = true;
      },
    });
    return { outcome, stop: () => void client.dispose() };
  };

  it('runs a subscription by id over SSE, and sends it the changes', async () => {
    const subscriber = sseSubscribe({ documentId: idOf(WATCH), variables: { names: ['ada@trusted'] } });
    try {
      await eventually(() => openSubscriptions() > 0, 'the SSE subscription to open');
      const description = await change('ada');
      await eventually(() => subscriber.outcome.events.length > 0, 'an event');
      expect(subscriber.outcome.events[0]).toEqual({
        profileChanged: { name: 'ada@trusted', profile: { description } },
      });
      expect(subscriber.outcome.errors).toEqual([]);
    } finally {
      subscriber.stop();
    }
  });

  it.skipIf(GRAPHQL_PATH_RERUN)('runs a subscription by id over graphql-ws, and sends it the changes', async () => {
    const subscriber = wsSubscribe({ documentId: idOf(WATCH), variables: { names: ['bob@trusted'] } });
    try {
      await eventually(() => {
        if (subscriber.outcome.ended) throw new Error(JSON.stringify(subscriber.outcome));
        return openSubscriptions() > 0;
      }, 'the graphql-ws subscription to open');
      const description = await change('bob');
      await eventually(() => subscriber.outcome.events.length > 0, 'an event');
      expect(subscriber.outcome.events[0]).toEqual({
        profileChanged: { name: 'bob@trusted', profile: { description } },
      });
    } finally {
      subscriber.stop();
    }
  });

  it.skipIf(GRAPHQL_PATH_RERUN)('answers an unknown id and a query beside an id over graphql-ws', async () => {
    const unknown = wsSubscribe({ documentId: UNKNOWN_ID });
    const both = wsSubscribe({ query: LOOKUP, documentId: idOf(LOOKUP), variables: { name: 'ada@trusted' } });
    try {
      await eventually(() => unknown.outcome.ended && both.outcome.ended, 'both refusals');
      expect(unknown.outcome.errors).toEqual([
        { message: 'No persisted document has this documentId', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } },
      ]);
      expect(both.outcome.errors).toMatchObject([{ message: 'Send either query or documentId, not both' }]);
    } finally {
      unknown.stop();
      both.stop();
    }
  });

  describe('a documents-only key', () => {
    const refusal = {
      message: 'This API key may run only persisted documents',
      extensions: { code: 'PERSISTED_DOCUMENTS_ONLY' },
    };

    it('is refused a query on POST and GET (also one that ran before), and runs ids', async () => {
      const variables = { name: 'ada@trusted' };
      // The same query, run before without the key, is one the service may answer prepared.
      for (let i = 0; i < 3; i += 1) expect((await post({ query: LOOKUP, variables })).status).toBe(200);
      for (const accept of ['application/graphql-response+json', 'application/json']) {
        for (const answer of [
          await post({ query: LOOKUP, variables }, { ...keyed(onlyDocuments), accept }),
          await get({ query: LOOKUP, variables: JSON.stringify(variables) }, { ...keyed(onlyDocuments), accept }),
          await post({ extensions: { persistedQuery: { version: 1, sha256Hash: sha(LOOKUP) } } }, keyed(onlyDocuments)),
          await post({}, keyed(onlyDocuments)),
        ]) {
          expect(answer).toEqual({ status: 400, body: { errors: [refusal] } });
        }
      }
      const byId = await post({ documentId: idOf(LOOKUP), variables }, keyed(onlyDocuments));
      expect(byId.status).toBe(200);
      expect(byId).toEqual(await post({ query: LOOKUP, variables }, keyed(anyDocument)));
      expect((await get({ documentId: idOf(TWO), operationName: 'First' }, keyed(onlyDocuments))).status).toBe(200);
      expect(await post({ documentId: UNKNOWN_ID }, keyed(onlyDocuments))).toMatchObject({ status: 400 });
    });

    it('is refused a query over SSE, and runs a subscription by id', async () => {
      const refused = sseSubscribe({ query: WATCH, variables: { names: ['ada@trusted'] } }, keyed(onlyDocuments));
      const allowed = sseSubscribe(
        { documentId: idOf(WATCH), variables: { names: ['ada@trusted'] } },
        keyed(onlyDocuments),
      );
      try {
        await eventually(() => refused.outcome.ended, 'the refusal');
        expect(refused.outcome.errors).toMatchObject([{ status: 400, body: { errors: [refusal] } }]);
        await eventually(() => openSubscriptions() > 0, 'the subscription by id to open');
        const description = await change('ada');
        await eventually(() => allowed.outcome.events.length > 0, 'an event');
        expect(allowed.outcome.events[0]).toEqual({
          profileChanged: { name: 'ada@trusted', profile: { description } },
        });
      } finally {
        refused.stop();
        allowed.stop();
      }
    });

    it.skipIf(GRAPHQL_PATH_RERUN)('is refused a query over graphql-ws, and runs a subscription by id', async () => {
      const connection = { apiKey: onlyDocuments.key };
      const refused = wsSubscribe({ query: WATCH, variables: { names: ['bob@trusted'] } }, connection);
      const allowed = wsSubscribe({ documentId: idOf(WATCH), variables: { names: ['bob@trusted'] } }, connection);
      try {
        await eventually(() => refused.outcome.ended, 'the refusal');
        expect(refused.outcome.errors).toEqual([refusal]);
        await eventually(() => openSubscriptions() > 0, 'the subscription by id to open');
        const description = await change('bob');
        await eventually(() => allowed.outcome.events.length > 0, 'an event');
        expect(allowed.outcome.events[0]).toEqual({
          profileChanged: { name: 'bob@trusted', profile: { description } },
        });
      } finally {
        refused.stop();
        allowed.stop();
      }
    });

    it('is in force within a second of `keys update`, and lifted as fast', async () => {
      const key = await createKey(handle);
      const query = { query: LOOKUP, variables: { name: 'ada@trusted' } };
      // Twice: the second answer comes from the key in the server's memory.
      expect([(await post(query, keyed(key))).status, (await post(query, keyed(key))).status]).toEqual([200, 200]);
      for (const [on, status] of [
        [true, 400],
        [false, 200],
      ] as const) {
        expect(await setApiKeyDocumentsOnly(handle.db, key.id, on)).toBe('updated');
        const changedAt = Date.now();
        await eventually(async () => (await post(query, keyed(key))).status === status, `documents-only ${on}`);
        expect(Date.now() - changedAt).toBeLessThanOrEqual(MAX_SILENCE_MS);
      }
    });
  });
});
