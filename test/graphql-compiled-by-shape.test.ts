/**
 * Compiled execution by shape (src/graphql/execution/compiled-by-shape.ts) on the service's schema and
 * data: documents that differ only in their string literals share one compiled plan, its answers
 * are those of uncompiled execution to the byte (generated documents against a server without
 * compiled execution), errors point into the document executed, and plans stay within the
 * document cache's bound. Documents compiled one by one answer variables they refuse, and
 * errors, like uncompiled execution too. Documents answered from profile answers are not compiled.
 */
import fc from 'fast-check';
import { type DocumentNode, parseValue, type StringValueNode } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../src/db/database.js';
import type { ShapePlan } from '../src/graphql/execution/compiled-by-shape.js';
import {
  COMPILE_AFTER_EXECUTIONS,
  compiledQueryBytes,
  createDocumentCaches,
  type DocumentCaches,
} from '../src/graphql/execution/document-cache.js';
import { createTestDatabase, type TestDatabase } from './support/databases.js';
import type { GraphQLAnswer } from './support/graphql-client.js';
import { insertGraphQLFixtures } from './support/graphql-fixtures.js';
import { type GraphQLOptions, type GraphQLTestService, serviceOn } from './support/graphql-server.js';

/** No budget runs out while the same documents are sent to two servers many times. */
const UNLIMITED = { PROFILE_LIMIT: '0', OWNER_CHECK_LIMIT: '1000000' };

type Ask = (query: string, variables?: Record<string, unknown>, operationName?: string) => Promise<GraphQLAnswer>;

/** Document caches that count the plans compiled into them. */
function countingCaches(maxBytes?: number): { documents: DocumentCaches<ShapePlan>; compiled(): number } {
  const documents = createDocumentCaches<ShapePlan>(maxBytes);
  let compiled = 0;
  const keep = documents.plans.set;
  documents.plans.set = (key, plan, characters) => {
    compiled += 1;
    keep(key, plan, characters);
  };
  return { documents, compiled: () => compiled };
}

// PGlite only: the property below sends thousands of documents, and what it compares (two
// executions of one document) does not depend on the database.
describe('compiled execution by shape', () => {
  let testDb: TestDatabase;
  let handle: DatabaseHandle;
  const opened: Array<Promise<GraphQLTestService>> = [];

  function server(graphql: GraphQLOptions = {}): Ask {
    const service = serviceOn(handle, UNLIMITED, undefined, { graphql });
    opened.push(service);
    return async (query, variables, operationName) => {
      const response = await fetch((await service).graphqlUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
        body: JSON.stringify({ query, variables, operationName }),
      });
      const text = await response.text();
      return { status: response.status, headers: response.headers, text, body: JSON.parse(text) };
    };
  }

  beforeAll(async () => {
    testDb = await createTestDatabase('pglite');
    handle = await testDb.open();
    await insertGraphQLFixtures(handle.db);
  });
  afterAll(async () => {
    await Promise.all(opened.map(async (service) => (await service).close()));
    await handle?.close();
    await testDb?.drop();
  });

  it('compiles one plan for any number of documents of one shape, each answered with its own literal', async () => {
    const { documents, compiled } = countingCaches();
    const ask = server({ documents });
    const names = ['demo@me', 'odd@me', 'x@other', 'josé@café', 'nobody@me'];
    for (let i = 0; i < 60; i += 1) {
      const name = names[i % names.length] ?? '';
      const { body } = await ask(`{ profile(name: ${JSON.stringify(name)}) { name level } }`);
      expect(body).toEqual({ data: { profile: name === 'nobody@me' ? null : { name, level: expect.any(Number) } } });
      expect(compiled()).toBe(i + 1 < COMPILE_AFTER_EXECUTIONS ? 0 : 1);
    }
    // Each operation of a shape is a plan of its own.
    const twoOperations = (i: number) =>
      `query P { profile(name: "p${i}@bulk") { name } } query Q { nameCheck(name: "p${i}@bulk") { valid } }`;
    for (let i = 0; i < COMPILE_AFTER_EXECUTIONS; i += 1) {
      expect((await ask(twoOperations(i), undefined, 'P')).body).toEqual({ data: { profile: { name: `p${i}@bulk` } } });
      expect((await ask(twoOperations(i), undefined, 'Q')).body).toEqual({ data: { nameCheck: { valid: true } } });
    }
    expect(compiled()).toBe(3);
  });

  it('executes the text itself when the plan its document stood in for is gone by execution', async () => {
    const { documents } = countingCaches();
    const ask = server({ documents });
    const name = (i: number) => `p${i % 60}@bulk`;
    const text = (i: number) => `{ profile(name: "${name(i)}") { name level } }`;
    for (let i = 0; i < COMPILE_AFTER_EXECUTIONS + 2; i += 1) await ask(text(i));
    // A request looks its plan up when its text is read, and again when it executes: the second
    // look finds nothing, as if other requests had pushed the plan out of the cache in between.
    const find = documents.plans.get;
    let looks = 0;
    documents.plans.get = (key) => {
      looks += 1;
      return looks % 2 === 0 ? undefined : find(key);
    };
    for (let i = 20; i < 50; i += 1) {
      expect((await ask(text(i))).body).toEqual({ data: { profile: { name: name(i), level: i % 60 } } });
    }
    expect(looks).toBe(60);
  });

  it('locates errors in the document executed, whose literals before them are longer or shorter', async () => {
    const ask = server();
    const uncompiled = server({ compiledExecution: false });
    // Literals before the erroring fields on their lines, on the line before, and after them.
    const document = (first: string, bad: string) =>
      `{ a: nameCheck(name: "${first}") { valid } b: profile(name: "${bad}") { name }\n  c: nameCheck(name: "${first}x") { valid } d: profile(name: "${bad}!") { name } }`;
    for (let i = 0; i < COMPILE_AFTER_EXECUTIONS; i += 1) await ask(document('ab', 'not a name'));
    for (const [first, bad] of [
      ['a much longer name than before@me', 'bad'],
      ['', 'not a name either, and longer'],
      ['ab', 'not a name'],
    ] as const) {
      const text = document(first, bad);
      const answer = await ask(text);
      expect(answer.text).toBe((await uncompiled(text)).text);
      const b = text.indexOf(' b: ') + 2;
      expect(answer.body.errors?.map((error) => error.locations)).toEqual([
        [{ line: 1, column: b }],
        [{ line: 2, column: text.indexOf(' d: ') + 1 - text.indexOf('\n') }],
      ]);
    }
  });

  it('answers conditions, repeated fragments, escapes, refused variables and propagated errors as uncompiled execution does', async () => {
    const ask = server();
    const uncompiled = server({ compiledExecution: false });
    const cases: Array<[(name: string) => string, Record<string, unknown>?]> = [
      // graphql-jit would put `image` where the skipped fragment stands.
      [(name) => `{ profile(name: "${name}") { ... @skip(if: true) { image } description image } }`],
      // graphql-jit would count the skipped spread as visited and leave out the second.
      [(name) => `{ profile(name: "${name}") { ...F @skip(if: true) level ...F } } fragment F on Profile { name }`],
      [
        (name) =>
          `{ a: profile(name: "${name}") { name } b: nameCheck(name: "${name}") { input } c: nameCheck(name: "\\u00e9\\"") { input } }`,
      ],
      // A variable that does not coerce: graphql-js's message, status and locations.
      [(name) => `query ($size: Int) { profile(name: "${name}") { avatarUrl(size: $size) } }`, { size: 'big' }],
      // Two errors that null one field: uncompiled execution reports the first only.
      [
        (name) =>
          `query ($size: Int) { profile(name: "${name}") { a: avatarUrl(size: $size) b: avatarUrl(size: $size) } }`,
        { size: 5000 },
      ],
    ];
    const names = ['demo@me', 'odd@me', 'josé@café', 'nobody@me', 'not a name'];
    for (const [document, variables] of cases) {
      for (let i = 0; i < COMPILE_AFTER_EXECUTIONS + names.length; i += 1) {
        const text = document(names[i % names.length] ?? '');
        const [answer, expected] = [await ask(text, variables), await uncompiled(text, variables)];
        expect({ text, answer: answer.text, status: answer.status }).toEqual({
          text,
          answer: expected.text,
          status: expected.status,
        });
      }
    }
  });

  it('answers variables it refuses as uncompiled execution does, also for documents compiled one by one', async () => {
    const ask = server();
    const uncompiled = server({ compiledExecution: false });
    const refused: Array<Record<string, unknown>> = [{ name: 'demo@me', size: 'big' }, { size: 16 }, { name: 7 }];
    // Without string literals (compiled per document), and with one (compiled by shape).
    for (const text of [
      'query ($name: String!, $size: Int) { profile(name: $name) { avatarUrl(size: $size) } }',
      'query ($name: String!, $size: Int) { profile(name: $name) { avatarUrl(size: $size) record(type: "name") { key } } }',
    ]) {
      for (let i = 0; i < COMPILE_AFTER_EXECUTIONS; i += 1) await ask(text, { name: 'demo@me', size: 16 });
      for (const variables of refused) {
        const [answer, expected] = [await ask(text, variables), await uncompiled(text, variables)];
        expect({ variables, answer: answer.text, status: answer.status }).toEqual({
          variables,
          answer: expected.text,
          status: expected.status,
        });
        expect(answer.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      }
    }
  });

  // graphql-jit writes data before errors; graphql-js, errors first. A GET's ETag is of the text.
  it('answers errors of documents compiled one by one in the text uncompiled execution gives', async () => {
    const ask = server();
    const uncompiled = server({ compiledExecution: false });
    const cases: Array<[string, Record<string, unknown>]> = [
      // An argument below the root field: not answered from profile answers, so compiled.
      ['query ($n: String!) { profile(name: $n) { name avatarUrl(size: 64) } }', { n: 'not a name' }],
      [
        'query ($names: [String!]!) { profiles(names: $names) { name avatarUrl(size: 64) } }',
        { names: ['demo@me', 'not a name'] },
      ],
      [
        'query ($n: String!, $size: Int) { profile(name: $n) { avatarUrl(size: $size) } }',
        { n: 'demo@me', size: 5000 },
      ],
    ];
    for (const [text, variables] of cases) {
      for (let i = 0; i < COMPILE_AFTER_EXECUTIONS + 2; i += 1) {
        const [answer, expected] = [await ask(text, variables), await uncompiled(text, variables)];
        expect(answer.text.startsWith('{"errors":'), answer.text).toBe(true);
        expect({ i, text, answer: answer.text, status: answer.status }).toEqual({
          i,
          text,
          answer: expected.text,
          status: expected.status,
        });
      }
    }
  });

  // They execute only where an answer cannot be written (src/graphql/execution/profile-answers.ts).
  it('compiles no document answered from profile answers, and compiles the same lookup with an argument', async () => {
    const documents = createDocumentCaches<ShapePlan>();
    const reserved = new Set<DocumentNode>();
    const reserve = documents.reserveCompiled;
    documents.reserveCompiled = (document) => {
      reserved.add(document);
      return reserve(document);
    };
    const ask = server({ documents });
    const executed = 'query ($n: String!) { profile(name: $n) { name avatarUrl(size: 64) } }';
    const requests: Array<[string, Record<string, unknown>]> = [
      ['query ($n: String!) { profile(name: $n) { name level records { key type raw } } }', { n: 'demo@me' }],
      ['query ($names: [String!]!) { profiles(names: $names) { name } }', { names: ['demo@me', 'odd@me'] }],
      [executed, { n: 'demo@me' }],
    ];
    for (let i = 0; i < COMPILE_AFTER_EXECUTIONS + 2; i += 1) {
      for (const [text, variables] of requests) expect((await ask(text, variables)).body.errors, text).toBeUndefined();
    }
    // All three are cached documents, so each could have been compiled; only the last was.
    const cached = requests.map(([text]) => documents.options.documentCache.get(text));
    expect(cached).not.toContain(undefined);
    expect(reserved).toEqual(new Set([cached[2]]));
  });

  it('keeps plans within the document cache bound, however many shapes come often enough to compile', async () => {
    const bound = 512 * 1024;
    const { documents, compiled } = countingCaches(bound);
    const ask = server({ documents });
    const shape = (i: number) => `{ t${i}: __type(name: "Profile") { name } }`;
    const shapes = 80;
    // Each plan is counted at about 36 KB: the bound holds a few of the 80.
    expect(compiledQueryBytes(shape(0).length) * shapes).toBeGreaterThan(3 * bound);
    for (let i = 0; i < shapes; i += 1) {
      for (let run = 0; run < COMPILE_AFTER_EXECUTIONS; run += 1) {
        expect((await ask(shape(i))).body).toEqual({ data: { [`t${i}`]: { name: 'Profile' } } });
      }
      expect(documents.estimatedBytes()).toBeLessThanOrEqual(bound);
    }
    expect(compiled()).toBe(shapes);
    // The first shape's plan was evicted: it is counted and compiled anew.
    for (let run = 0; run < COMPILE_AFTER_EXECUTIONS; run += 1) await ask(shape(0));
    expect(compiled()).toBe(shapes + 1);
    // The last one's is still there.
    await ask(shape(shapes - 1));
    expect(compiled()).toBe(shapes + 1);
  });

  it('answers every generated document as uncompiled execution does, to the byte', async () => {
    const { documents, compiled } = countingCaches();
    const ask = server({ documents });
    const uncompiled = server({ compiledExecution: false });
    const cursors = await pageCursors(uncompiled);
    let templates = 0;
    await fc.assert(
      fc.asyncProperty(template(cursors), fc.integer(), async (generated, seed) => {
        templates += 1;
        const requests = assignments(generated, seed, COMPILE_AFTER_EXECUTIONS + 6);
        for (const [index, { text, variables }] of requests.entries()) {
          const answer = await ask(text, variables, generated.operationName);
          // From the compiling execution on, compare (before it both run uncompiled).
          if (index + 1 < COMPILE_AFTER_EXECUTIONS) continue;
          const expected = await uncompiled(text, variables, generated.operationName);
          expect({ text, variables, answer: answer.text, status: answer.status }).toEqual({
            text,
            variables,
            answer: expected.text,
            status: expected.status,
          });
        }
      }),
      { numRuns: 60 },
    );
    // About two in five compile (not those with conditions on variables, nor those whose errors
    // graphql-jit would report otherwise): the answers compared include many compiled ones.
    expect(compiled()).toBeGreaterThan(templates / 5);
  }, 120_000);
});

/** Cursors of real pages, and one that is not a cursor. */
async function pageCursors(ask: Ask): Promise<string[]> {
  const cursors = ['not a cursor'];
  for (const [prefix, namespace] of [
    ['p', 'bulk'],
    ['p1', null],
    ['d', 'me'],
  ] as const) {
    const { body } = await ask(
      'query ($p: String!, $n: String) { searchProfiles(prefix: $p, namespace: $n, first: 2) { pageInfo { endCursor } } }',
      { p: prefix, n: namespace },
    );
    const page = (body.data as { searchProfiles: { pageInfo: { endCursor: string } } }).searchProfiles;
    cursors.push(page.pageInfo.endCursor);
  }
  return cursors;
}

// ---------------------------------------------------------------------------------------------
// Generated documents. A template is a document whose string literals are slots: each slot is
// of a class, and every document made from the template gives each class one literal, distinct
// classes distinct values, so all of them have one shape (and reach its plan), while one class in
// two slots is the same literal twice. Every template has a string literal: documents without
// one are compiled per document, as before compiled execution by shape.

/** Literals as written in documents (escaped forms included), by what they are given to. */
const POOLS = {
  name: [
    '"demo@me"',
    '"odd@me"',
    '"p7@bulk"',
    '"josé@café"',
    '"JOS\\u00c9@caf\\u00e9"',
    '"nobody@me"',
    '"not a name"',
    '""',
    '"\\"q\\"@me"',
    '"x@other"',
    '"a\\tb@me"',
    '"Self@ME"',
  ],
  prefix: ['"p"', '"p1"', '"d"', '"é"', '"bad prefix!"', '"o"'],
  namespace: ['"bulk"', '"me"', '"café"', '"nope"', '"Bad NS"'],
  address: ['"D999"', '"0x0000000000000000000000000000000000de0000"', '"nothing"', '" "'],
  recordType: ['"name"', '"phone"', '"social"', '"crypto"', '"pgp"', '"nope"'],
  symbol: ['"doge"', '"DOGE"', '"eth"', '"xyz"', '"btc"'],
  entryKey: ['"Blog"', '"twitter"', '"mastodon"', '"none"'],
  email: ['"owner.me@private.example"', '"maker.demo@private.example"', '"bad email"', '"OWNER.ME@private.example "'],
  typeName: ['"Profile"', '"Query"', '"Nope"', '"ProfileRecord"'],
} as const;

type Pool = keyof typeof POOLS;

interface Template {
  /** The text, with `{{n}}` where the literal of class n goes. */
  text: string;
  /** The pool of each class (a cursor class draws from the cursors). */
  classes: Array<Pool | 'cursor'>;
  operationName: string | undefined;
  /** Variables the operation declares, by name: what they are given. */
  variables: Record<string, 'name' | 'boolean' | 'size'>;
  cursors: readonly string[];
}

/** Builds template text while handing out literal classes. */
class TemplateWriter {
  readonly classes: Template['classes'] = [];

  slot(pool: Pool | 'cursor', reuse: number | undefined): string {
    if (reuse !== undefined) {
      const same = this.classes.findIndex((each, index) => each === pool && index >= reuse);
      if (same >= 0) return `{{${same}}}`;
    }
    this.classes.push(pool);
    return `{{${this.classes.length - 1}}}`;
  }
}

interface Choices {
  /** Per field: which of the generated parts it uses, and whether a slot reuses an earlier class. */
  picks: number[];
  reuse: Array<number | undefined>;
  separators: string[];
  aliases: boolean[];
}

const choices = fc.record({
  picks: fc.array(fc.nat({ max: 1000 }), { minLength: 12, maxLength: 12 }),
  reuse: fc.array(fc.option(fc.nat({ max: 3 }), { nil: undefined }), { minLength: 12, maxLength: 12 }),
  separators: fc.array(fc.constantFrom(' ', '\n  ', ', '), { minLength: 12, maxLength: 12 }),
  aliases: fc.array(fc.boolean(), { minLength: 12, maxLength: 12 }),
});

/** The selection on Profile. */
function profileSelection(writer: TemplateWriter, c: Choices, withVariables: boolean, salt: number): string {
  const pick = (i: number) => c.picks[(i + salt) % c.picks.length] ?? 0;
  const reuse = (i: number) => c.reuse[(i + salt) % c.reuse.length];
  const parts = [
    () => 'name',
    () => 'description image localPart namespace',
    () => 'level length version id __typename',
    () => (withVariables ? 'avatarUrl(size: $size)' : 'avatarUrl avatar: avatarUrl(size: 32)'),
    () =>
      `records { key type raw __typename ... on TextRecord { value } ... on PhoneRecord { numbers } ... on SocialRecord { twitter entries { key value } } ... on MapRecord { entry(key: ${writer.slot('entryKey', reuse(1))}) } }`,
    () => `record(type: ${writer.slot('recordType', reuse(2))}) { key type ... on PhoneRecord { numbers } }`,
    () => `wallet(symbol: ${writer.slot('symbol', reuse(3))}) { symbol address chain accountId }`,
    () => 'wallets { symbol address }',
    () =>
      'attributes { traitType value { __typename ... on StringAttributeValue { value } ... on IntAttributeValue { number: value } } }',
    () => '...ProfileParts',
    () => '...ProfileParts @skip(if: true) name @include(if: false)',
    () => '... on Profile @include(if: true) { description } ... @skip(if: true) { image }',
    () => (withVariables ? 'level @skip(if: $yes) namespace @include(if: $yes)' : 'level @include(if: false)'),
  ];
  const count = 1 + (pick(0) % 3);
  const chosen: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const part = parts[pick(i + 1) % parts.length];
    if (part === undefined) continue;
    const text = part();
    // Aliased copies of one part are separate fields: each its own response name.
    chosen.push(c.aliases[(i + salt) % c.aliases.length] && !text.startsWith('.') ? `s${salt}x${i}: ${text}` : text);
  }
  return [...new Set(chosen)].join(c.separators[salt % c.separators.length] ?? ' ');
}

/** One root field, aliased as `alias`. */
function rootField(writer: TemplateWriter, c: Choices, withVariables: boolean, index: number): string {
  const pick = c.picks[index] ?? 0;
  const reuse = c.reuse[index];
  const name = () => (withVariables && pick % 5 === 0 ? '$name' : writer.slot('name', reuse));
  const selection = () => profileSelection(writer, c, withVariables, index + 1);
  const alias = `r${index}: `;
  switch (pick % 9) {
    case 0:
    case 1:
      return `${alias}profile(name: ${name()}) { ${selection()} }`;
    case 2:
      return pick % 2 === 0
        ? `${alias}profiles(names: [${name()}, ${name()}]) { ${selection()} }`
        : `${alias}profiles(names: ${writer.slot('name', reuse)}) { ${selection()} }`;
    case 3: {
      const namespace = pick % 3 === 0 ? `, namespace: ${writer.slot('namespace', reuse)}` : '';
      const after = pick % 4 === 0 ? `, after: ${writer.slot('cursor', reuse)}` : '';
      return `${alias}searchProfiles(prefix: ${writer.slot('prefix', reuse)}${namespace}, first: 2${after}) { edges { cursor node { ${selection()} } } pageInfo { hasNextPage endCursor } }`;
    }
    case 4:
      return `${alias}profilesByWallet(address: ${writer.slot('address', reuse)}) { edges { node { name } } pageInfo { hasNextPage } }`;
    case 5:
      return `${alias}nameCheck(name: ${name()}) { input canonical valid reason exists warnings }`;
    case 6:
      return `${alias}ownerCheck(email: ${writer.slot('email', reuse)}, name: ${name()}) { hasCreated email name }`;
    case 7:
      return `${alias}__type(name: ${writer.slot('typeName', reuse)}) { name kind }`;
    default:
      return `${alias}__typename`;
  }
}

function template(cursors: readonly string[]): fc.Arbitrary<Template> {
  return fc
    .record({
      c: choices,
      // Mostly one or two root fields: more root fields seldom compile (see jit-error-parity.ts).
      fields: fc.oneof(
        { arbitrary: fc.constant(1), weight: 3 },
        { arbitrary: fc.integer({ min: 2, max: 4 }), weight: 2 },
      ),
      form: fc.constantFrom('anonymous', 'named', 'two operations'),
      variableName: fc.constantFrom('name', 'literal0', 'v'),
    })
    .map(({ c, fields, form, variableName }) => {
      const writer = new TemplateWriter();
      const withVariables = form !== 'anonymous';
      const operation = (start: number) =>
        Array.from({ length: fields }, (_, i) => rootField(writer, c, withVariables, start + i)).join(
          c.separators[start] ?? ' ',
        );
      // An operation declares the variables it uses (an unused one is invalid).
      const declared = (body: string) => {
        const used = [`$name: String!`, '$yes: Boolean!', '$size: Int'].filter((each) =>
          new RegExp(`\\${each.split(':')[0]}\\b`).test(body),
        );
        return used.length === 0 ? '' : `(${used.join(', ')})`.replaceAll('$name', `$${variableName}`);
      };
      const query = (name: string, body: string) =>
        `query ${name}${declared(body)} {\n  ${body.replaceAll('$name', `$${variableName}`)}\n}`;
      let text: string;
      let operationName: string | undefined;
      if (form === 'anonymous') {
        text = `{ ${operation(0)} }`;
      } else if (form === 'named') {
        text = query('Q', operation(0));
        operationName = c.aliases[0] ? 'Q' : undefined;
      } else {
        text = `${query('A', operation(0))}\n${query('B', operation(fields))}`;
        operationName = c.aliases[1] ? 'A' : 'B';
      }
      // The fragment only where it is used (an unused fragment is invalid).
      if (text.includes('...ProfileParts')) {
        const recordType = writer.slot('recordType', c.reuse[0]);
        text += `\nfragment ProfileParts on Profile { name fragmentRecord: record(type: ${recordType}) { key } }`;
      }
      const variables: Template['variables'] = withVariables
        ? { [variableName]: 'name', yes: 'boolean', size: 'size' }
        : {};
      return { text, classes: writer.classes, operationName, variables, cursors };
    })
    .filter((generated) => generated.classes.length > 0);
}

/** `count` documents of the template, each class given a literal, distinct classes distinct values. */
function assignments(
  generated: Template,
  seed: number,
  count: number,
): Array<{ text: string; variables: Record<string, unknown> | undefined }> {
  let state = seed >>> 0;
  const random = (below: number) => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state % below;
  };
  const literalValue = (literal: string) => (parseValue(literal) as StringValueNode).value;
  const sizes = [16, 64, null, 5000, 'big'];
  return Array.from({ length: count }, () => {
    const used = new Set<string>();
    const literals = generated.classes.map((pool) => {
      const options = pool === 'cursor' ? generated.cursors.map((cursor) => JSON.stringify(cursor)) : POOLS[pool];
      const free = options.filter((literal) => !used.has(literalValue(literal)));
      // Pools are larger than their classes in any template, but keep the shape if not.
      const literal = free[random(free.length)] ?? `"unique ${used.size}"`;
      used.add(literalValue(literal));
      return literal;
    });
    const text = generated.text.replace(/\{\{(\d+)\}\}/g, (_, index: string) => literals[Number(index)] ?? '""');
    const entries = Object.entries(generated.variables).map(([name, kind]) => {
      if (kind === 'boolean') return [name, random(2) === 0];
      if (kind === 'size') return [name, sizes[random(sizes.length)]];
      return [name, literalValue(POOLS.name[random(POOLS.name.length)] ?? '""')];
    });
    return { text, variables: entries.length === 0 ? undefined : Object.fromEntries(entries) };
  });
}
