/**
 * Literal hoisting (src/graphql/execution/literal-hoisting.ts) and the error locations of hoisted plans
 * (src/graphql/execution/literal-locations.ts): which literals become which variables, of which types, what
 * is left alone, and where errors of a plan compiled from another document of the shape point.
 */
import { buildSchema, GraphQLError, type GraphQLSchema, parse, print } from 'graphql';
import { describe, expect, it } from 'vitest';
import { shapeOf } from '../src/graphql/execution/document-shape.js';
import { hoistLiterals, unusedVariablePrefix } from '../src/graphql/execution/literal-hoisting.js';
import { relocatedErrors } from '../src/graphql/execution/literal-locations.js';
import { schema } from '../src/graphql/schema/schema.js';

/** The hoisted document printed, and which literal (by its value) each variable stands for. */
function hoisted(text: string, operationName?: string, on: GraphQLSchema = schema) {
  const document = parse(text);
  const literals = shapeOf(document)?.literals ?? [];
  const result = hoistLiterals(on, document, operationName, literals);
  if (result === undefined) return undefined;
  return {
    printed: print(result.document),
    values: Object.fromEntries(result.variables.map(({ name, literal }) => [name, literals[literal]?.value])),
  };
}

describe('literal hoisting', () => {
  it('makes each string literal a variable of the input type at its position', () => {
    expect(hoisted('{ profile(name: "alice@acme") { name record(type: "phone") { key } } }')).toEqual({
      printed: print(
        parse(
          'query ($literal0: String!, $literal1: String!) { profile(name: $literal0) { name record(type: $literal1) { key } } }',
        ),
      ),
      values: { literal0: 'alice@acme', literal1: 'phone' },
    });
    // List items are of the item type; a single value where a list goes keeps the list type (a
    // variable's value is wrapped into a list like the literal is); optional arguments are nullable.
    expect(
      hoisted(
        '{ a: profiles(names: ["a@me", "b@me"]) { name } b: profiles(names: "c@me") { name } searchProfiles(prefix: "p", namespace: "me", after: "x") { pageInfo { endCursor } } }',
      )?.printed,
    ).toBe(
      print(
        parse(`query ($literal0: String!, $literal1: String!, $literal2: [String!]!, $literal3: String!, $literal4: String, $literal5: String) {
          a: profiles(names: [$literal0, $literal1]) { name }
          b: profiles(names: $literal2) { name }
          searchProfiles(prefix: $literal3, namespace: $literal4, after: $literal5) { pageInfo { endCursor } }
        }`),
      ),
    );
  });

  it('gives an equal literal at positions of one type one variable, and one per type otherwise', () => {
    const result = hoisted(
      '{ a: profile(name: "x@me") { name } b: profile(name: "x@me") { name } c: profiles(names: "x@me") { name } }',
    );
    expect(result?.printed).toBe(
      print(
        parse(
          'query ($literal0: String!, $literal1: [String!]!) { a: profile(name: $literal0) { name } b: profile(name: $literal0) { name } c: profiles(names: $literal1) { name } }',
        ),
      ),
    );
    expect(result?.values).toEqual({ literal0: 'x@me', literal1: 'x@me' });
  });

  it("keeps the client's variables, adding its own after them under names no client variable starts with", () => {
    const text =
      'query Q($literal0: String!, $size: Int) { profile(name: $literal0) { avatarUrl(size: $size) record(type: "name") { key } } }';
    expect(unusedVariablePrefix(parse(text))).toBe('_literal');
    expect(hoisted(text, 'Q')).toEqual({
      printed: print(
        parse(
          'query Q($literal0: String!, $size: Int, $_literal0: String!) { profile(name: $literal0) { avatarUrl(size: $size) record(type: $_literal0) { key } } }',
        ),
      ),
      values: { _literal0: 'name' },
    });
    expect(unusedVariablePrefix(parse('query ($_literalX: Int, $literal: Int) { __typename }'))).toBe('__literal');
  });

  it('hoists the executed operation and the fragments, in fragments too, and drops the other operations', () => {
    const text = `
      query A { profile(name: "a@me") { ...F } }
      query B { nameCheck(name: "b@me") { valid } profile(name: "c@me") { ...F } }
      fragment F on Profile { record(type: "phone") { key } ... on Profile { wallet(symbol: "eth") { address } } }`;
    expect(hoisted(text, 'B')).toEqual({
      printed: print(
        parse(`
          query B($literal0: String!, $literal1: String!, $literal2: String!, $literal3: String!) {
            nameCheck(name: $literal0) { valid } profile(name: $literal1) { ...F }
          }
          fragment F on Profile { record(type: $literal2) { key } ... on Profile { wallet(symbol: $literal3) { address } } }`),
      ),
      values: { literal0: 'b@me', literal1: 'c@me', literal2: 'phone', literal3: 'eth' },
    });
    expect(hoisted(text, 'C')).toBeUndefined();
    expect(hoisted(text)).toBeUndefined();
  });

  it('reads the values of escaped literals, and keeps the locations of the fields', () => {
    const document = parse(
      '{\n  profile(name: "jos\\u00e9@caf\\u00e9") { name }\n  nameCheck(name: "\\"q\\"") { valid } }',
    );
    const literals = shapeOf(document)?.literals ?? [];
    const result = hoistLiterals(schema, document, undefined, literals);
    expect(result?.variables.map(({ literal }) => literals[literal]?.value)).toEqual(['josé@café', '"q"']);
    const operation = result?.document.definitions[0];
    const field = operation?.kind === 'OperationDefinition' ? operation.selectionSet.selections[1] : undefined;
    expect(field?.loc?.startToken).toMatchObject({ line: 3, column: 3 });
  });

  it('decides literal @skip and @include as graphql-js does, and leaves conditions on variables alone', () => {
    expect(
      hoisted(`{ profile(name: "a@me") {
        ...F @skip(if: true) name @include(if: false) image @skip(if: false) @include(if: true)
        ... on Profile @include(if: true) { level } ...F
      } }
      fragment F on Profile { record(type: "phone") { key } }`)?.printed,
    ).toBe(
      print(
        parse(`query ($literal0: String!, $literal1: String!) {
          profile(name: $literal0) { image ... on Profile { level } ...F }
        }
        fragment F on Profile { record(type: $literal1) { key } }`),
      ),
    );
    expect(hoisted('query ($yes: Boolean!) { profile(name: "a@me") { name @include(if: $yes) } }')).toBeUndefined();
  });

  it('leaves alone documents whose literals a variable would not stand for exactly', () => {
    // Block strings (which may span lines), literals in default values and directive arguments.
    expect(hoisted('{ profile(name: """demo@me""") { name } }')).toBeUndefined();
    expect(hoisted('query ($n: String = "demo@me") { profile(name: $n) { name } }')).toBeUndefined();
    const custom = buildSchema(`
      directive @tag(name: String) on FIELD
      scalar Email
      type Query { f(s: String, e: Email, id: ID): String }
      type Mutation { g(s: String): String }`);
    expect(hoisted('{ f(s: "x") @tag(name: "y") }', undefined, custom)).toBeUndefined();
    // A custom scalar may read a literal and a value differently; ID reads both alike.
    expect(hoisted('{ f(e: "a@b") }', undefined, custom)).toBeUndefined();
    expect(hoisted('{ f(id: "7") }', undefined, custom)?.values).toEqual({ literal0: '7' });
    // Only queries: mutations (and subscriptions) run as they are.
    expect(hoisted('mutation { g(s: "x") }', undefined, custom)).toBeUndefined();
  });
});

describe('error locations of a plan compiled from another document of the shape', () => {
  const placesOf = (text: string) => shapeOf(parse(text))?.literals ?? [];
  /** An error as graphql-jit makes them: located by line and column only. */
  const error = (line: number, column: number): GraphQLError =>
    Object.assign(new GraphQLError('boom', { path: ['b'] }), { locations: [{ line, column }] });

  it('moves columns by the difference of the literals before them on their line, and nothing else', () => {
    const compiledFrom = placesOf(
      '{ a: profile(name: "ab") { name } b: profile(name: "cd") { name }\n  c: profile(name: "ef") { name } }',
    );
    const executed = placesOf(
      '{ a: profile(name: "abcdef") { name } b: profile(name: "c") { name }\n  c: profile(name: "ef") { name } }',
    );
    const moved = relocatedErrors([error(1, 3), error(1, 35), error(2, 3), error(1, 999)], compiledFrom, executed);
    // "ab" became "abcdef" (+4) before b; "cd" became "c" (-1) before column 999.
    expect(moved.map((each) => each.locations)).toEqual([
      [{ line: 1, column: 3 }],
      [{ line: 1, column: 39 }],
      [{ line: 2, column: 3 }],
      [{ line: 1, column: 1002 }],
    ]);
    // The rest of the error is the same: message, path, class.
    expect(moved[1]).toBeInstanceOf(GraphQLError);
    expect({ message: moved[1]?.message, path: moved[1]?.path }).toEqual({ message: 'boom', path: ['b'] });
    // Literals of equal lengths move nothing: the errors are the same objects.
    const same = [error(1, 35)];
    expect(relocatedErrors(same, compiledFrom, compiledFrom)).toBe(same);
  });
});
