/**
 * Validation by shape (src/graphql/execution/validation-by-shape.ts): a document that differs from a valid
 * one only in its string literals skips validation, and nothing a full validation would refuse
 * gets through that way.
 */
import { buildSchema, parse } from 'graphql';
import { createSchema, createYoga, type Plugin } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { documentShape } from '../src/graphql/execution/document-shape.js';
import { stringLiteralsAreContentFree, validationByShape } from '../src/graphql/execution/validation-by-shape.js';
import { schema as serviceSchema } from '../src/graphql/schema/schema.js';

const typeDefs = /* GraphQL */ `
  enum Size { SMALL LARGE }
  type Query { echo(text: String, id: ID, n: Int, size: Size): String }
`;

/** A Yoga server with the plugin, counting the validations that really run. */
function server(): { ask(query: string): Promise<{ data?: unknown; errors?: { message: string }[] }>; runs(): number } {
  let runs = 0;
  const countValidations: Plugin = {
    onValidate({ validateFn, setValidationFn }) {
      setValidationFn((...args) => {
        runs += 1;
        return validateFn(...args);
      });
    },
  };
  const executable = createSchema({
    typeDefs,
    resolvers: { Query: { echo: (_root: unknown, args: Record<string, unknown>) => JSON.stringify(args) } },
  });
  const yoga = createYoga({ schema: executable, plugins: [validationByShape(executable), countValidations] });
  return {
    async ask(query) {
      const response = await yoga.fetch('http://localhost/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query }),
      });
      return (await response.json()) as { data?: unknown; errors?: { message: string }[] };
    },
    runs: () => runs,
  };
}

describe('validation by shape', () => {
  it('validates a document once for all its string literals, and answers each with its own', async () => {
    const { ask, runs } = server();
    expect(await ask('{ echo(text: "alice@acme") }')).toEqual({ data: { echo: '{"text":"alice@acme"}' } });
    expect(await ask('{ echo(text: "bob@acme") }')).toEqual({ data: { echo: '{"text":"bob@acme"}' } });
    expect(await ask('{ echo(text: """carol@acme""") }')).toEqual({ data: { echo: '{"text":"carol@acme"}' } });
    // Block or plain, a lone string literal is accepted alike: one validation for the three.
    expect(runs()).toBe(1);
    // A different shape (another argument) is validated.
    await ask('{ echo(id: "x") }');
    expect(runs()).toBe(2);
  });

  it('still refuses fields that conflict because their literals differ', async () => {
    const { ask } = server();
    expect((await ask('{ a: echo(text: "x") a: echo(text: "x") }')).errors).toBeUndefined();
    const conflict = await ask('{ a: echo(text: "x") a: echo(text: "y") }');
    expect(conflict.errors?.[0]?.message).toMatch(/Fields "a" conflict because they have differing arguments/);
    // Equal values written as a block and a plain string print apart: graphql-js refuses them too.
    const forms = await ask('{ a: echo(text: "x") a: echo(text: """x""") }');
    expect(forms.errors?.[0]?.message).toMatch(/Fields "a" conflict/);
  });

  it('validates an invalid document in full every time, so its message quotes its own literal', async () => {
    const { ask, runs } = server();
    expect((await ask('{ echo(n: "seven") }')).errors?.[0]?.message).toBe(
      'Int cannot represent non-integer value: "seven"',
    );
    expect((await ask('{ echo(n: "eight") }')).errors?.[0]?.message).toBe(
      'Int cannot represent non-integer value: "eight"',
    );
    expect((await ask('{ echo(size: "SMALL") }')).errors?.[0]?.message).toMatch(
      /Enum "Size" cannot represent non-enum value/,
    );
    expect(runs()).toBe(3);
  });

  it('keeps numbers and enum values in the shape', () => {
    expect(
      documentShape(parse('{ echo(text: "a", n: 2147483648, size: LARGE) b: echo(text: "a") c: echo(text: "b") }')),
    ).toBe('{ echo(text: "#0", n: 2147483648, size: LARGE) b: echo(text: "#0") c: echo(text: "#1") }');
    expect(documentShape(parse('{ echo(n: 1) }'))).toBeUndefined();
    expect(documentShape(parse('{ echo(text: "a") }', { noLocation: true }))).toBeUndefined();
  });

  it("is on for the service's schema and off for a schema with a custom scalar argument", () => {
    expect(stringLiteralsAreContentFree(serviceSchema)).toBe(true);
    expect(stringLiteralsAreContentFree(buildSchema('scalar Email type Query { f(e: Email): String }'))).toBe(false);
    expect(
      stringLiteralsAreContentFree(buildSchema('scalar Email input I { e: Email } type Query { f(i: I): String }')),
    ).toBe(false);
    // A custom scalar that is only ever output does not matter.
    expect(stringLiteralsAreContentFree(buildSchema('scalar JSON type Query { f(s: String): JSON }'))).toBe(true);
  });
});
