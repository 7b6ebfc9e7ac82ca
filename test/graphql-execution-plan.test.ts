/**
 * The execution plan (src/graphql/execution/execution-plan.ts) and the rules the shortcuts of
 * src/graphql/execution rest on (its README.md, "Rules"). Each test of a rule is named after it:
 * when one fails, the change it caught breaks a shortcut's promise to answer as execution does.
 */
import { readdirSync, readFileSync } from 'node:fs';
import fc from 'fast-check';
import { buildSchema, type GraphQLField, type GraphQLSchema, isInterfaceType, isObjectType, parse } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/config.js';
import { EdgeCaching } from '../src/edge/edge-caching.js';
import { compiledExecutionByShape, type ShapePlan } from '../src/graphql/execution/compiled-by-shape.js';
import { createDocumentCaches } from '../src/graphql/execution/document-cache.js';
import {
  type ExecutionPath,
  type ExecutionPlan,
  executionPlan,
  HOOKS_PREPARED_OPERATIONS_SKIP,
} from '../src/graphql/execution/execution-plan.js';
import { MAX_TOKENS } from '../src/graphql/execution/graphql-armor.js';
import { MAX_NESTING } from '../src/graphql/execution/nesting-limit.js';
import { PROFILE_FIELDS, profileAnswers } from '../src/graphql/execution/profile-answers.js';
import { customInputScalars } from '../src/graphql/execution/validation-by-shape.js';
import { schema } from '../src/graphql/schema/schema.js';
import { createGraphQLServer, type GraphQLServerDeps } from '../src/graphql/yoga.js';
import { createLogger } from '../src/logging/logger.js';
import type { Profile } from '../src/profiles/profile.js';
import { StoredRecord, splitStoredRecords } from '../src/profiles/stored-records.js';
import { startTestServer, type TestServer } from './support/app-server.js';
import { createTestDatabase, type TestDatabase } from './support/databases.js';
import { postGraphQL } from './support/graphql-client.js';
import { insertGraphQLFixtures } from './support/graphql-fixtures.js';

function planFor(graphqlSchema: GraphQLSchema, options: { compiled?: boolean; extraPlugins?: Plugin[] } = {}) {
  const documents = createDocumentCaches<ShapePlan>();
  return executionPlan({
    schema: graphqlSchema,
    answers: profileAnswers(graphqlSchema),
    byShape: options.compiled === false ? undefined : compiledExecutionByShape(graphqlSchema, documents),
    extraPlugins: options.extraPlugins ?? [],
  });
}

const pathOf = (plan: ExecutionPlan, text: string, operationName?: string): ExecutionPath =>
  plan.pathOf(parse(text), operationName);

/** The service's GraphQL server without a database: nothing here executes. */
function serverWith(plugins: Plugin[], overrides: Partial<GraphQLServerDeps> = {}) {
  return createGraphQLServer({
    profiles: {} as GraphQLServerDeps['profiles'],
    avatars: {} as GraphQLServerDeps['avatars'],
    live: {} as GraphQLServerDeps['live'],
    edge: new EdgeCaching({ purging: false, maxAgeSeconds: 60, sharedMaxAgeSeconds: 60 }, () => true),
    config: loadConfig({ NODE_ENV: 'test' }),
    logger: createLogger('silent', { pretty: false }),
    plugins,
    ...overrides,
  });
}

describe('the execution plan: which path answers an operation', () => {
  const plan = planFor(schema);

  it('answers a lone profile lookup by a variable, reading the profile alone, from written answers', () => {
    expect(pathOf(plan, 'query P($n: String!) { profile(name: $n) { name records { key } } }').kind).toBe(
      'written-answer',
    );
    expect(pathOf(plan, 'query P($n: [String!]!) { profiles(names: $n) { name } }').kind).toBe('written-answer');
  });

  it('compiles documents with string literals by shape, and the others one by one', () => {
    expect(pathOf(plan, '{ profile(name: "demo@me") { name } }').kind).toBe('compiled-by-shape');
    expect(pathOf(plan, '{ __typename }').kind).toBe('compiled');
    // An argument on a field of the profile: not a written answer.
    expect(pathOf(plan, 'query P($n: String!) { profile(name: $n) { avatarUrl(size: 64) } }').kind).toBe('compiled');
  });

  it('executes subscriptions, and everything but written answers when compiled execution is off', () => {
    expect(pathOf(plan, 'subscription S($n: [String!]!) { profileChanged(names: $n) { name } }')).toEqual({
      kind: 'execute',
      because: 'subscription',
    });
    const uncompiled = planFor(schema, { compiled: false });
    expect(pathOf(uncompiled, '{ profile(name: "demo@me") { name } }')).toEqual({
      kind: 'execute',
      because: 'compiled execution off',
    });
    expect(pathOf(uncompiled, 'query P($n: String!) { profile(name: $n) { name } }').kind).toBe('written-answer');
  });

  it('says the same path for the same operation, and tells operations of one document apart', () => {
    const document = parse('query A($n: String!) { profile(name: $n) { name } } query B { __typename }');
    expect(plan.pathOf(document, 'A').kind).toBe('written-answer');
    expect(plan.pathOf(document, 'B').kind).toBe('compiled');
    expect(plan.pathOf(document, 'A')).toBe(plan.pathOf(document, 'A'));
    expect(Object.isFrozen(plan.pathOf(document, 'A'))).toBe(true);
  });
});

describe('the execution plan before parsing: which requests the transport leaves to Yoga because they may stream', () => {
  const plan = planFor(schema);

  it('says a text with the word subscription, or a persisted query known by its hash alone, may stream', () => {
    expect(plan.mayStream({ query: 'subscription { profileChanges(names: ["a@b"]) { name } }' })).toBe(true);
    expect(plan.mayStream({ query: 'query { profile(name: "subscription@me") { name } }' })).toBe(true);
    expect(plan.mayStream({ query: null })).toBe(true);
    expect(plan.mayStream({})).toBe(true);
  });

  it('says any other text may not', () => {
    expect(plan.mayStream({ query: 'query { profile(name: "alice@acme") { name } }' })).toBe(false);
    expect(plan.mayStream({ query: '{ subscriptions: profile(name: "a@b") { name } }' })).toBe(false);
  });
});

describe('src/graphql/execution/README.md', () => {
  it('maps every file of execution/', () => {
    const folder = new URL('../src/graphql/execution/', import.meta.url);
    const readme = readFileSync(new URL('README.md', folder), 'utf8');
    const files = readdirSync(folder).filter((file) => file.endsWith('.ts'));
    expect(files.filter((file) => !readme.includes(`\`${file}\``))).toEqual([]);
  });
});

describe('rule: a new onParams/onParse/onValidate hook is skipped for prepared queries', () => {
  /**
   * How many plugins of the service's server (Yoga's own and the service's) have each hook a
   * prepared request skips. Each was checked (src/graphql/execution/prepared-operations.ts): it
   * acts on `extensions`, uncached texts or mutations, or its verdict is the one the executed
   * document already had.
   */
  const CHECKED: Record<(typeof HOOKS_PREPARED_OPERATIONS_SKIP)[number], number> = {
    onParams: 4,
    onParse: 6,
    onValidate: 9,
  };

  it("the server's plugins with such hooks are the ones checked for prepared queries", () => {
    let plugins: readonly unknown[] = [];
    serverWith([
      {
        onPluginInit(payload) {
          plugins = payload.plugins;
        },
      },
    ]);
    for (const hook of HOOKS_PREPARED_OPERATIONS_SKIP) {
      const count = plugins.filter(
        (plugin) =>
          typeof plugin === 'object' && plugin !== null && (plugin as Record<string, unknown>)[hook] !== undefined,
      ).length;
      expect(
        count,
        `a plugin with an ${hook} hook was added or removed: prepared queries skip it. Decide whether a prepared ` +
          'request may skip it (src/graphql/execution/prepared-operations.ts), then change CHECKED here',
      ).toBe(CHECKED[hook]);
    }
  });

  it('prepares nothing when a plugin beyond the service’s own has one', () => {
    for (const hook of HOOKS_PREPARED_OPERATIONS_SKIP) {
      const plugin = { [hook]: () => {} } as Plugin;
      expect(serverWith([plugin]).plan.preparesQueries, hook).toBe(false);
      expect(serverWith([{ onExecute: () => {} }]).plan.preparesQueries).toBe(true);
    }
  });

  describe('over HTTP', () => {
    let database: TestDatabase;
    let server: TestServer;
    let parses = 0;

    beforeAll(async () => {
      database = await createTestDatabase('pglite');
      const handle = await database.open();
      await insertGraphQLFixtures(handle.db);
      const counting: Plugin = {
        onParse() {
          parses += 1;
        },
      };
      server = await startTestServer(handle, { PROFILE_LIMIT: '0' }, undefined, {
        graphqlHttpPath: 'service',
        graphql: { plugins: [counting] },
      });
    });
    afterAll(async () => {
      const handle = server?.app.database;
      await server?.close();
      await handle?.close();
      await database?.drop();
    });

    it('runs the added hook on every request of a query sent again and again', async () => {
      const query = 'query P($n: String!) { profile(name: $n) { name } }';
      const before = parses;
      for (let i = 0; i < 5; i += 1) {
        const answer = await postGraphQL(fetch, `${server.url}/graphql`, query, { n: 'alice@acme' });
        expect(answer.status).toBe(200);
      }
      expect(parses - before).toBe(5);
      expect(server.app.graphql.prepared.find({ query })).toBeUndefined();
    });
  });
});

describe('rule: plugin order in yoga.ts', () => {
  /** A document nested one level deeper than allowed, with more tokens than graphql-armor's parser lets through. */
  const deepAndLong = `${'{ a '.repeat(MAX_NESTING + 1)}${' b'.repeat(MAX_TOKENS)}${' }'.repeat(MAX_NESTING + 1)}`;

  it("the nesting check wraps the limits' parser, so it refuses a deep document before any parsing", async () => {
    const response = await serverWith([]).yoga.fetch('http://127.0.0.1/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
      body: JSON.stringify({ query: deepAndLong }),
    });
    const answer = (await response.json()) as { errors: { message: string }[] };
    // Were the limits after the nesting check, their token-counting parser would run first and
    // refuse the tokens; graphql-js would recurse into the nesting whenever a limit is raised.
    expect(answer.errors.map((error) => error.message)).toEqual([
      `Syntax Error: brackets nest more than ${MAX_NESTING} levels deep.`,
    ]);
  });
});

describe('rule: nothing before execution reads string-literal values', () => {
  /** Templates of documents: each `$` is a string literal, all of them distinct. */
  const TEMPLATES = [
    '{ profile(name: $) { name description } }',
    '{ a: profile(name: $) { name } b: profile(name: $) { id } }',
    '{ profiles(names: [$, $]) { name records { key type raw } } }',
    'query Q { searchProfiles(prefix: $, namespace: $, first: 5) { edges { node { name } } } }',
    '{ nameCheck(name: $) { available } }',
    '{ profile(name: $) { ...F } } fragment F on Profile { name record(type: $) { key } }',
    // Invalid whatever the literals: an unknown field, and an alias over the limit of graphql-armor.
    '{ profile(name: $) { nope } }',
    `{ ${Array.from({ length: 40 }, (_, i) => `a${i}: profile(name: $) { name }`).join(' ')} }`,
  ];

  /** Parse and validate as the service's server runs them (every plugin's hooks), without shortcuts. */
  const server = serverWith([], { compiledExecution: false });
  const verdict = (text: string) => {
    const enveloped = server.yoga.getEnveloped({ params: { query: text } } as never);
    try {
      const document = enveloped.parse(text);
      return enveloped.validate(enveloped.schema, document).length === 0 ? 'valid' : 'invalid';
    } catch {
      return 'refused at parse';
    }
  };

  it('parse and validate give one verdict for every set of distinct literals of a shape', () => {
    const literal = fc.string({ unit: 'binary', maxLength: 40 }).map((value) => JSON.stringify(value));
    for (const template of TEMPLATES) {
      const holes = template.split('$').length - 1;
      const first = template.replaceAll('$', () => JSON.stringify(`n${Math.random()}`));
      const expected = verdict(first);
      fc.assert(
        fc.property(fc.uniqueArray(literal, { minLength: holes, maxLength: holes }), (literals) => {
          let i = 0;
          const text = template.replaceAll('$', () => literals[i++] as string);
          expect(verdict(text), `${template} with ${literals.join(', ')}`).toBe(expected);
        }),
        { numRuns: 8 },
      );
    }
  });
});

describe('rule: resolvers doing I/O are declared async', () => {
  /** What a resolver's source names when it does I/O: the profiles service, live updates, the whole context. */
  const DOES_IO = /\b(profiles|live|context)\b/;

  it('every resolver that reaches the services or the whole context is an async function', () => {
    const notAsync: string[] = [];
    for (const type of Object.values(schema.getTypeMap())) {
      if (!(isObjectType(type) || isInterfaceType(type)) || type.name.startsWith('__')) continue;
      for (const field of Object.values(type.getFields()) as GraphQLField<unknown, unknown>[]) {
        const resolve = field.resolve;
        if (resolve === undefined || !DOES_IO.test(resolve.toString())) continue;
        if (resolve.constructor.name !== 'AsyncFunction') notAsync.push(`${type.name}.${field.name}`);
      }
    }
    // src/graphql/execution/jit-error-parity.ts tells fields that can raise by `async`.
    expect(notAsync).toEqual([]);
  });
});

describe('rule: PROFILE_FIELDS fields are synchronous functions of the profile', () => {
  it('no field listed has an async resolver or one that reaches the services or the whole context', () => {
    const offending: string[] = [];
    for (const [typeName, names] of Object.entries(PROFILE_FIELDS)) {
      const type = schema.getType(typeName);
      if (!(isObjectType(type) || isInterfaceType(type))) continue;
      for (const name of names) {
        const resolve = type.getFields()[name]?.resolve;
        if (resolve === undefined) continue;
        const source = resolve.toString();
        if (resolve.constructor.name === 'AsyncFunction' || /\b(profiles|live|context|serviceRequest)\b/.test(source)) {
          offending.push(`${typeName}.${name}`);
        }
      }
    }
    // src/graphql/execution/answer-writer.ts calls them outside execution and keeps their answers.
    expect(offending).toEqual([]);
  });
});

describe('rule: key/type/raw stay plain properties of StoredRecord', () => {
  it('reads key and type as own data properties and raw as the stored value, no method among them', () => {
    const text =
      '{"1":{"type":"text","value":"a"},"2":{"type":"map","value":{"x":"y"}},"3":{"type":"list","value":["z",1]}}';
    const records = splitStoredRecords(text) ?? [];
    expect(records.length).toBe(3);
    for (const record of records) {
      expect(record).toBeInstanceOf(StoredRecord);
      for (const part of ['key', 'type'] as const) {
        const descriptor = Object.getOwnPropertyDescriptor(record, part);
        expect(descriptor && 'value' in descriptor && typeof descriptor.value === 'string', part).toBe(true);
      }
      // graphql-js's default resolver calls a property that is a function: none may be one.
      expect(typeof record.raw).not.toBe('function');
      expect(JSON.stringify(record.raw)).toBe(JSON.stringify(JSON.parse(record.text)));
      expect(JSON.stringify(record)).toBe(JSON.stringify({ key: record.key, type: record.type, raw: record.raw }));
    }
  });
});

/** The properties of T that can be assigned (methods left out). */
type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type AssignableKeys<T> = {
  [K in keyof T]-?: T[K] extends (...args: never[]) => unknown
    ? never
    : Equals<{ [Q in K]: T[K] }, { -readonly [Q in K]: T[K] }> extends true
      ? K
      : never;
}[keyof T];

describe('rule: Profile stays immutable', () => {
  it('has no property that can be assigned (checked by the compiler: npm run typecheck)', () => {
    // A `readonly` dropped from Profile makes this line a type error.
    const none: [AssignableKeys<Profile>] extends [never] ? 'none' : AssignableKeys<Profile> = 'none';
    expect(none).toBe('none');
  });
});

describe('rule: no custom scalar in an input position', () => {
  it("the service's schema has none (validation and compilation by shape rely on it)", () => {
    expect(customInputScalars(schema)).toEqual([]);
  });

  it('a schema with one compiles nothing by shape, so no text is taken for another of its shape', () => {
    const custom = buildSchema('scalar Email type Query { check(email: Email, name: String): String }');
    expect(customInputScalars(custom)).toEqual(['Query.check(email): Email']);
    const plan = planFor(custom);
    expect(pathOf(plan, '{ check(name: "a") }').kind).toBe('compiled');
  });
});
