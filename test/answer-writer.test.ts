/**
 * Answers written without execution (src/graphql/execution/answer-writer.ts): for every value
 * and selection, the writer gives the text execution's result has under the field, byte for
 * byte, or nothing where execution gives an error (which execution then answers). Attacked with
 * the service's schema over stored records of every awkward kind, and with a schema of its own
 * whose resolvers fail in every way execution knows.
 */
import {
  type DocumentNode,
  type ExecutionResult,
  execute,
  GraphQLEnumType,
  GraphQLInterfaceType,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  type GraphQLResolveInfo,
  GraphQLScalarType,
  GraphQLSchema,
  GraphQLString,
  GraphQLUnionType,
  getOperationAST,
  Kind,
  parse,
  validate,
} from 'graphql';
import { describe, expect, it, vi } from 'vitest';
import { answerWriter } from '../src/graphql/execution/answer-writer.js';
import { possibleObjectType } from '../src/graphql/execution/answer-writing.js';
import { answerPlanOf } from '../src/graphql/execution/profile-answers.js';
import type { GraphQLContext } from '../src/graphql/schema/context.js';
import { schema } from '../src/graphql/schema/schema.js';
import { Profile } from '../src/profiles/profile.js';
import {
  NAMES_A_RECORD_TYPE_FOR_EVERY_RECORD,
  RESOLVED_BY_TYPE_AND_SHAPE,
  recordsAnswerText,
  StoredRecord,
  splitStoredRecords,
} from '../src/profiles/stored-records.js';
import { KEPT_ANSWER_QUERIES } from './support/graphql-fixtures.js';

/** What execution answers under `profile`: its text, or undefined when it has errors. */
async function executed(
  target: GraphQLSchema,
  document: DocumentNode,
  context: unknown,
  variables: Record<string, unknown>,
): Promise<string | undefined> {
  expect(validate(target, document)).toEqual([]);
  const result = (await execute({
    schema: target,
    document,
    contextValue: context,
    variableValues: variables,
  })) as ExecutionResult;
  if ((result.errors?.length ?? 0) > 0) return undefined;
  const [key] = Object.keys(result.data ?? {});
  return JSON.stringify(result.data?.[key as string]);
}

/** The writer of `document`'s root field, whose value is a `parent`, as a plan makes one. */
function rootWriter(target: GraphQLSchema, document: DocumentNode, parent: GraphQLObjectType) {
  const operation = getOperationAST(document);
  const root = operation?.selectionSet.selections[0];
  if (operation == null || root?.kind !== Kind.FIELD) throw new Error('no root field');
  return answerWriter({ schema: target, operation, fragments: {} }, parent, root);
}

describe('answers written for the service schema', () => {
  const profileWith = (recordsJson: string) =>
    new Profile({
      id: 7,
      name: 'josé@me',
      localPart: 'josé',
      namespace: 'me',
      description: 'Says "hi"\n\u2028 and 😀',
      image: 'https://img.example.org/a.png',
      level: 2,
      contentHash: 'c0ffee',
      recordsJson,
    });
  const contextFor = (profile: Profile) =>
    ({
      profiles: { lookupProfile: () => Promise.resolve({ value: profile }) },
      avatars: { avatarUrl: (of: Profile, size: number) => `http://127.0.0.1/api/${of.name}/avatar?size=${size}` },
      serviceRequest: {},
    }) as unknown as GraphQLContext;

  /** Records texts of every kind the writer must agree with execution on. */
  const RECORDS = {
    plain:
      '{"1":{"type":"name","value":"José Smith"},"4":{"type":"phone","value":"+15551,+15552"},' +
      '"6":{"type":"social","value":{"twitter":"a","telegram":"b"}},"8":{"type":"crypto","value":{}},' +
      '"9":{"type":"crypto","value":{"btc":"bc1q","eth":"0xab"}},"50":{"type":"web_url","value":""}}',
    escapes:
      '{"1":{"type":"name","value":"Jos\\u00e9 \\"Joe\\" \\/ Smith"},"2":{"type":"ty\\"pe","value":"a\\\\b"},' +
      '"6":{"type":"social","value":{"twitter":"\\u0041","k\\u0065y":"v"}},"7":{"type":"notes","value":{"a":"\\n"}}}',
    orderAndRepeats:
      '{"6":{"type":"social","value":{"twitter":"first","twitter":"second"}},' +
      '"7":{"type":"notes","value":{"Blog":"b","2024":"y","10":"t","0":"z"}},' +
      '"8":{"type":"notes","value":{"x":"1","y":"2","x":"3"}}}',
    otherValues:
      '{"1":{"type":"name","value":1.0},"2":{"type":"social","value":{"twitter":1}},' +
      '"3":{"type":"link","value":[1,"a",{"b":true}]},"4":{"type":"notes","value":{"a":{"b":"c"}}},' +
      '"5":{"type":"phone","value":false}}',
    manyKeys: `{"9":{"type":"notes","value":{${Array.from({ length: 40 }, (_, i) => `"k${i}":"v${i}"`).join(',')}}}}`,
    repeatAfterMany: `{"9":{"type":"notes","value":{${Array.from({ length: 33 }, (_, i) => `"k${i}":"v"`).join(',')},"k0":"w"}}}`,
    // Many record types, of both shapes, some a prefix or of the length of another.
    manyTypes: `{${[
      ...Array.from({ length: 70 }, (_, i) => `"${i + 100}":{"type":"x${i}","value":${i % 2 ? '"v"' : '{"k":"v"}'}}`),
      '"41":{"type":"nam","value":"a"}',
      '"42":{"type":"name","value":"b"}',
      '"43":{"type":"names","value":"c"}',
      '"44":{"type":"emaiL","value":"d"}',
      '"45":{"type":"email","value":"e"}',
      '"46":{"type":"social","value":"f"}',
      '"47":{"type":"social","value":{"twitter":"g"}}',
    ].join(',')}}`,
    whitespace: '{"1": {"type": "name", "value": "A"}, "2": {"type": "social", "value": {"twitter": "t"}}}',
    none: '{}',
    nullValue: '{"1":{"type":"name","value":null}}',
  };
  const SELECTIONS = [
    ...KEPT_ANSWER_QUERIES,
    'query P($n: String!) { profile(name: $n) { records { key } records { type raw } n: name n: name __typename } }',
    `query P($n: String!) { profile(name: $n) { ...A ... on Profile { records { ...B } } } }
     fragment A on Profile { attributes { value { ... on IntAttributeValue { value } __typename } } }
     fragment B on ProfileRecord { __typename ... on TextRecord { value } ... on SocialRecord { twitter entries { key } } }`,
    // Written from the stored text (src/graphql/execution/stored-records-writer.ts) where it allows.
    'query P($n: String!) { profile(name: $n) { records { t: type raw k: key key raw } name } }',
    'query P($n: String!) { profile(name: $n) { records { raw } records { ...R } } } fragment R on ProfileRecord { key }',
    // Not the same fields on every record type: written record by record.
    'query P($n: String!) { profile(name: $n) { records { key ... on TextRecord { raw } } } }',
    // What Apollo Client sends: __typename in every selection.
    'query P($n: String!) { profile(name: $n) { __typename records { __typename key raw type t: __typename } } }',
  ];

  for (const [kind, recordsJson] of Object.entries(RECORDS)) {
    it(`writes what execution answers, or nothing where it has errors: records ${kind}`, async () => {
      for (const query of SELECTIONS) {
        const document = parse(query);
        const operation = getOperationAST(document);
        const variable = operation?.variableDefinitions?.[0]?.variable.name.value as string;
        const plan = answerPlanOf(schema, document, undefined);
        expect(plan, query).toBeDefined();
        // Each side a profile of its own: neither sees the records the other read.
        const expected = await executed(schema, document, contextFor(profileWith(recordsJson)), { [variable]: 'x' });
        const profile = profileWith(recordsJson);
        expect({ query, written: plan?.write(profile, contextFor(profile)) }).toEqual({ query, written: expected });
      }
    });
  }

  it('writes what execution answers for each of many profiles in turn, with the names of record types kept from the ones before', async () => {
    const kinds = Object.keys(RECORDS) as Array<keyof typeof RECORDS>;
    for (const query of SELECTIONS) {
      const document = parse(query);
      const variable = getOperationAST(document)?.variableDefinitions?.[0]?.variable.name.value as string;
      const plan = answerPlanOf(schema, document, undefined);
      // The same plan throughout, as a document's plan is kept between requests: twice round, both ways.
      for (const kind of [...kinds, ...kinds.toReversed(), 'manyTypes', 'plain', 'manyTypes'] as const) {
        const expected = await executed(schema, document, contextFor(profileWith(RECORDS[kind])), { [variable]: 'x' });
        const profile = profileWith(RECORDS[kind]);
        expect({ query, kind, written: plan?.write(profile, contextFor(profile)) }).toEqual({
          query,
          kind,
          written: expected,
        });
      }
    }
  });

  it('writes a profile whose records are plain, escaped, reordered or repeated (so the tests above reach the writer)', () => {
    const plan = answerPlanOf(schema, parse(KEPT_ANSWER_QUERIES[0] as string), undefined);
    for (const kind of [
      'plain',
      'escapes',
      'orderAndRepeats',
      'otherValues',
      'manyKeys',
      'manyTypes',
      'whitespace',
      'none',
    ] as const) {
      const profile = profileWith(RECORDS[kind]);
      expect(plan?.write(profile, contextFor(profile)), kind).toBeTypeOf('string');
    }
    const profile = profileWith(RECORDS.nullValue);
    expect(plan?.write(profile, contextFor(profile))).toBeUndefined();
  });

  it("declares the record interface's type resolver a function of a record's type and shape that names a record type for every record, which it is", () => {
    const iface = schema.getType('ProfileRecord') as GraphQLInterfaceType;
    expect(iface.extensions[RESOLVED_BY_TYPE_AND_SHAPE]).toBe(true);
    expect(iface.extensions[NAMES_A_RECORD_TYPE_FOR_EVERY_RECORD]).toBe(true);
    const info = {} as GraphQLResolveInfo;
    const records = Object.values(RECORDS).flatMap((text) => splitStoredRecords(text) ?? []);
    records.push(
      StoredRecord.of('1', 'social', { twitter: 1 }),
      StoredRecord.of('2', 'phone', '+1'),
      StoredRecord.of('3', '', ''),
      StoredRecord.of('4', 'constructor', {}),
      StoredRecord.of('5', 'crypto', [1]),
      StoredRecord.of('6', 'name', null),
    );
    expect(records.length).toBeGreaterThan(20);
    for (const record of records) {
      const { type, shape } = record;
      const name = iface.resolveType?.(record, {}, info, iface);
      expect(iface.resolveType?.({ type, shape }, {}, info, iface), record.text).toBe(name);
      expect(typeof name === 'string' ? possibleObjectType(schema, iface, name)?.name : undefined, record.text).toBe(
        name,
      );
    }
  });

  it('writes records asked for key, type, raw and __typename from the stored text, without splitting it, where the text allows', () => {
    const split = vi.spyOn(Profile.prototype, 'records', 'get');
    try {
      const splits = (query: string, kind: keyof typeof RECORDS) => {
        split.mockClear();
        const plan = answerPlanOf(schema, parse(query), undefined);
        const profile = profileWith(RECORDS[kind]);
        expect(plan?.write(profile, contextFor(profile)), `${kind}: ${query}`).toBeTypeOf('string');
        return split.mock.calls.length > 0;
      };
      const keyTypeRaw = KEPT_ANSWER_QUERIES[0] as string;
      expect(splits(keyTypeRaw, 'plain')).toBe(false);
      expect(splits(keyTypeRaw, 'none')).toBe(false);
      expect(splits(SELECTIONS.at(-1) as string, 'manyTypes')).toBe(false);
      expect(splits(SELECTIONS.at(-4) as string, 'plain')).toBe(false);
      expect(splits(SELECTIONS.at(-3) as string, 'plain')).toBe(false);
      expect(splits(SELECTIONS.at(-1) as string, 'plain')).toBe(false);
      // A backslash, a value that is not text, a key written twice, another layout: split as before.
      for (const kind of ['escapes', 'otherValues', 'orderAndRepeats', 'whitespace'] as const) {
        expect(splits(keyTypeRaw, kind), kind).toBe(true);
      }
      // Fields that differ between record types.
      expect(splits(KEPT_ANSWER_QUERIES[2] as string, 'plain')).toBe(true);
      expect(splits(SELECTIONS.at(-2) as string, 'plain')).toBe(true);
    } finally {
      split.mockRestore();
    }
  });
});

describe("a stored record's raw text", () => {
  const texts = [
    '"plain"',
    '""',
    '"José 😀 \u2028"',
    '"a\\"b"',
    '"\\u00e9"',
    '"a\\/b"',
    '{}',
    '{"a":"b","c":"d"}',
    '{"2024":"y","Blog":"b"}',
    '{"a":"b","a":"c"}',
    '{"ab":"x","a":"b"}',
    '{"a":"\\n"}',
    '{"a":1}',
    '1.0',
    'null',
    '[1,2]',
  ];

  it('is what JSON.stringify writes for the parsed value, or undefined', () => {
    const records = splitStoredRecords(
      `{${texts.map((text, i) => `"${i}":{"type":"t","value":${text}}`).join(',')}}`,
    ) as StoredRecord[];
    expect(records.map((record) => record.text)).toEqual(texts);
    for (const record of records) {
      const { rawText } = record;
      if (rawText !== undefined) expect(rawText, record.text).toBe(JSON.stringify(record.raw));
    }
    expect(records.map((record) => record.rawText !== undefined)).toEqual([
      true,
      true,
      true,
      false,
      false,
      false,
      true,
      true,
      true,
      false,
      true,
      false,
      false,
      false,
      false,
      false,
    ]);
  });

  it('is undefined for a map with a key written twice, however many keys come first', () => {
    for (const count of [1, 5, 31, 32, 40]) {
      const keys = Array.from({ length: count }, (_, i) => `"k${i}":"v"`);
      const [record] = splitStoredRecords(`{"1":{"type":"t","value":{${keys.join(',')},"k0":"w"}}}`) as StoredRecord[];
      expect(record?.rawText, `${count} keys`).toBeUndefined();
      expect(JSON.stringify(record?.raw)).not.toBe(record?.text);
    }
  });

  it('is what records written from the stored text give, or they give nothing', () => {
    const fields = [
      { prefix: '{"k":', part: 'key' },
      { prefix: ',"t":', part: 'type' },
      { prefix: ',"r":', part: 'raw' },
    ] as const;
    const json = `{${texts.map((text, i) => `"${i}":{"type":"t${i}","value":${text}}`).join(',')}}`;
    const each = (splitStoredRecords(json) as StoredRecord[]).map((record) =>
      record.rawText === undefined
        ? undefined
        : `{"k":${JSON.stringify(record.key)},"t":${JSON.stringify(record.type)},"r":${record.rawText}}`,
    );
    for (const [i, text] of texts.entries()) {
      const one = `{"${i}":{"type":"t${i}","value":${text}}}`;
      // A backslash anywhere sends the whole text to the split, even where rawText would take it.
      const expected = text.includes('\\') || each[i] === undefined ? undefined : `[${each[i]}]`;
      expect(recordsAnswerText(one, fields), text).toBe(expected);
    }
    const plain = texts.filter((_, i) => each[i] !== undefined && !texts[i]?.includes('\\'));
    const many = `{${plain.map((text, i) => `"${i * 7}":{"type":"a b","value":${text}}`).join(',')}}`;
    const written = recordsAnswerText(many, fields);
    expect(JSON.parse(written as string)).toEqual(
      (splitStoredRecords(many) as StoredRecord[]).map((record) => ({ k: record.key, t: record.type, r: record.raw })),
    );
    expect(recordsAnswerText('{}', fields)).toBe('[]');
    for (const broken of [
      '',
      '[]',
      '{"a":{"type":"t","value":"v"}}',
      '{"1":{"type":"t","value":"v"}',
      '{"1":{"type":"t","value":"v"}}x',
    ]) {
      expect(recordsAnswerText(broken, fields), broken).toBeUndefined();
    }
  });

  it('is the JSON.stringify text of a value read already', () => {
    const record = StoredRecord.of('1', 'notes', { b: 'x', a: 'y' });
    expect(record.rawText).toBe('{"b":"x","a":"y"}');
  });
});

describe('answers written for a schema whose resolvers misbehave', () => {
  const Shout = new GraphQLScalarType({
    name: 'Shout',
    serialize: (value) => (value === 'quiet' ? null : String(value).toUpperCase()),
  });
  const Mood = new GraphQLEnumType({ name: 'Mood', values: { HAPPY: { value: 1 }, SAD: { value: 2 } } });
  const Named = new GraphQLInterfaceType({
    name: 'Named',
    fields: { label: { type: GraphQLString } },
    resolveType: (value: { kind?: string }) => value.kind,
  });
  const Cat = new GraphQLObjectType({
    name: 'Cat',
    interfaces: [Named],
    fields: { label: { type: GraphQLString }, lives: { type: GraphQLString } },
  });
  const Dog = new GraphQLObjectType({
    name: 'Dog',
    interfaces: [Named],
    isTypeOf: (value: { kind?: string; good?: boolean }) => value.kind === 'Dog' && value.good !== false,
    fields: { label: { type: GraphQLString } },
  });
  const Pet = new GraphQLUnionType({
    name: 'Pet',
    types: [Cat, Dog],
    resolveType: (value: { kind?: string }) => value.kind,
  });
  type Source = Record<string, unknown>;
  const Thing: GraphQLObjectType = new GraphQLObjectType({
    name: 'Thing',
    fields: () => ({
      text: { type: GraphQLString },
      sure: { type: new GraphQLNonNull(GraphQLString) },
      shout: { type: Shout },
      mood: { type: Mood },
      many: { type: new GraphQLList(new GraphQLNonNull(GraphQLString)) },
      maybeMany: { type: new GraphQLList(GraphQLString) },
      pet: { type: Pet },
      named: { type: Named },
      child: { type: Thing },
      computed: {
        type: GraphQLString,
        resolve: (source: Source) => {
          if (source.fails === true) throw new Error('resolver failed');
          if (source.later === true) return Promise.resolve('later');
          return 'now';
        },
      },
    }),
  });
  const toy = new GraphQLSchema({
    query: new GraphQLObjectType({
      name: 'Query',
      fields: {
        thing: {
          type: Thing,
          args: { id: { type: GraphQLString } },
          resolve: (_root, _args, context: Source) => context.thing,
        },
      },
    }),
  });
  const QUERY = `query Q($id: String) { thing(id: $id) {
    text sure shout mood many maybeMany computed alias: text
    pet { __typename ... on Cat { label lives } ... on Dog { label } }
    named { label ... on Cat { lives } }
    child { sure child { text } }
  } }`;
  const fine: Source = {
    text: 'a "quoted" text',
    sure: 's',
    shout: 'hey',
    mood: 2,
    many: ['x', 'y'],
    maybeMany: ['x', null],
    pet: { kind: 'Cat', label: 'tom', lives: '9' },
    named: { kind: 'Dog', label: 'rex' },
    child: { sure: 'c', child: null },
  };
  // The cases execution answers with errors, and one it answers after a wait, which the writer
  // leaves to it too; every other case is written.
  const cases: Array<[string, Source]> = [
    ['every field answered', fine],
    ['nulls where allowed', { sure: 's' }],
    ['a null where not allowed', { ...fine, sure: null }],
    ['a nested null where not allowed', { ...fine, child: { sure: undefined } }],
    ['a null item of a non-null list', { ...fine, many: ['x', null] }],
    ['a list that is no array', { ...fine, many: 'xy' }],
    ['a serialiser that gives null', { ...fine, shout: 'quiet' }],
    ['an enum value the type does not have', { ...fine, mood: 3 }],
    ['a resolver that throws', { ...fine, fails: true }],
    ['a resolver that returns a promise', { ...fine, later: true }],
    ['a value that is an error', { ...fine, text: new Error('an error as a value') }],
    ['a type name the schema does not have', { ...fine, pet: { kind: 'Cow' } }],
    ['an object type outside the union', { ...fine, pet: { kind: 'Thing' } }],
    ['an object refused by isTypeOf', { ...fine, named: { kind: 'Dog', good: false } }],
  ];

  for (const [label, thing] of cases) {
    it(`writes what execution answers, or nothing where it has errors: ${label}`, async () => {
      const document = parse(QUERY);
      const write = rootWriter(toy, document, Thing);
      const expected = await executed(toy, document, { thing }, { id: '1' });
      expect(write(thing, { thing })).toBe(thing.later === true ? undefined : expected);
      if (thing.later === true) expect(expected).toContain('"computed":"later"');
    });
  }

  it('writes the answer the first case expects (so the comparisons above reach a written text)', () => {
    const written = rootWriter(toy, parse(QUERY), Thing)(fine, { thing: fine });
    expect(JSON.parse(written ?? 'null')).toMatchObject({ shout: 'HEY', mood: 'SAD', pet: { __typename: 'Cat' } });
  });
});

describe('records written from the stored text only where the schema reads them as stored', () => {
  const RECORDS_JSON = '{"1":{"type":"name","value":"Ann"},"2":{"type":"notes","value":{"b":"x","a":"y"}}}';
  const profile = new Profile({
    id: 1,
    name: 'ann@me',
    localPart: 'ann',
    namespace: 'me',
    description: '',
    image: '',
    level: 0,
    contentHash: 'c',
    recordsJson: RECORDS_JSON,
  });
  const Json = new GraphQLScalarType({ name: 'JSON', serialize: (value) => value });
  const Labelled = new GraphQLScalarType({ name: 'Labelled', serialize: (value) => `k${String(value)}` });
  type Part = { type?: GraphQLScalarType; resolve?: (record: StoredRecord) => unknown };
  /** A schema like the service's, with one part of it changed; the writer must still agree with execution. */
  const schemaWith = (change: {
    records?: (profile: Profile) => unknown;
    key?: Part;
    raw?: Part;
    isTypeOf?: boolean;
    resolveType?: () => unknown;
    /** The interface declares its type resolver names one of its types for every record. */
    namesEveryRecord?: boolean;
  }): GraphQLSchema => {
    const fields = () => ({
      key: { type: new GraphQLNonNull(change.key?.type ?? GraphQLString), resolve: change.key?.resolve },
      type: { type: new GraphQLNonNull(GraphQLString) },
      raw: { type: new GraphQLNonNull(change.raw?.type ?? Json), resolve: change.raw?.resolve },
    });
    const Rec = new GraphQLInterfaceType({
      name: 'Rec',
      fields,
      resolveType: (change.resolveType ?? (() => 'Plain')) as () => string,
      extensions: change.namesEveryRecord === true ? { [NAMES_A_RECORD_TYPE_FOR_EVERY_RECORD]: true } : {},
    });
    const Plain = new GraphQLObjectType({
      name: 'Plain',
      interfaces: [Rec],
      fields,
      isTypeOf: change.isTypeOf === true ? () => false : undefined,
    });
    const ProfileType = new GraphQLObjectType({
      name: 'Profile',
      fields: {
        records: { type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(Rec))), resolve: change.records },
      },
    });
    return new GraphQLSchema({
      types: [Plain],
      query: new GraphQLObjectType({
        name: 'Query',
        fields: { profile: { type: ProfileType, resolve: () => profile } },
      }),
    });
  };
  const QUERIES = ['{ profile { records { raw key type } } }', '{ profile { records { __typename raw key type } } }'];
  const changes: Array<[string, Parameters<typeof schemaWith>[0]]> = [
    ['as the service reads them', {}],
    ['records with a resolver of their own', { records: (p) => [...p.records].reverse() }],
    ['a key with a resolver of its own', { key: { resolve: (record) => `#${record.key}` } }],
    ['a key of another scalar', { key: { type: Labelled } }],
    ['raw with a resolver of its own', { raw: { resolve: (record) => record.type } }],
    ['a record type whose isTypeOf refuses the records', { isTypeOf: true }],
    ['a type resolver that names a type outside the interface', { resolveType: () => 'Query' }],
    ['a type resolver that names no type', { resolveType: () => undefined }],
  ];

  for (const [label, change] of changes) {
    it(`writes what execution answers: ${label}`, async () => {
      const target = schemaWith(change);
      for (const query of QUERIES) {
        const document = parse(query);
        const write = rootWriter(target, document, target.getType('Profile') as GraphQLObjectType);
        const expected = await executed(target, document, {}, {});
        expect({ query, written: write(profile, {}) }).toEqual({ query, written: expected });
      }
    });
  }

  it('asks a type resolver declared to name a record type for every record only for an answer that writes __typename', async () => {
    const resolveType = vi.fn(() => 'Plain');
    const target = schemaWith({ resolveType, namesEveryRecord: true });
    const callsOfWriting = async (query: string) => {
      const document = parse(query);
      const write = rootWriter(target, document, target.getType('Profile') as GraphQLObjectType);
      const expected = await executed(target, document, {}, {});
      resolveType.mockClear();
      expect(write(profile, {})).toEqual(expected);
      return resolveType.mock.calls.length;
    };
    expect(await callsOfWriting(QUERIES[0] as string)).toBe(0);
    expect(await callsOfWriting(QUERIES[1] as string)).toBeGreaterThan(0);
  });

  it('leaves records whose type resolver waits to execution', async () => {
    const target = schemaWith({ resolveType: () => Promise.resolve('Plain') });
    const document = parse(QUERIES[1] as string);
    expect(rootWriter(target, document, target.getType('Profile') as GraphQLObjectType)(profile, {})).toBeUndefined();
    expect(await executed(target, document, {}, {})).toContain('"__typename":"Plain"');
  });
});
