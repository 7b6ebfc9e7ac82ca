/**
 * Which operations compile by shape as far as their errors go (src/graphql/execution/jit-error-parity.ts):
 * those where graphql-jit cannot report errors other than uncompiled execution does.
 */
import { getOperationAST, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { jitErrorsMatch } from '../src/graphql/execution/jit-error-parity.js';
import { schema } from '../src/graphql/schema/schema.js';

function matches(text: string): boolean {
  const document = parse(text);
  const operation = getOperationAST(document);
  if (operation == null) throw new Error('one operation expected');
  return jitErrorsMatch(schema, document, operation);
}

describe('errors of compiled operations', () => {
  it('match for errors that do not propagate, however many', () => {
    expect(matches('{ profile(name: "a@me") { name description image level records { key type raw } } }')).toBe(true);
    expect(
      matches('{ a: profile(name: "a@me") { name } b: profile(name: "b@me") { record(type: "x") { key } } }'),
    ).toBe(true);
    expect(
      matches('{ __typename __type(name: "Profile") { name fields { name } } a: profile(name: "a@me") { id } }'),
    ).toBe(true);
  });

  it('match for one error that propagates, with the fields that can fail above or below it', () => {
    // avatarUrl is non-null and takes input; profile above it is nullable.
    expect(matches('{ profile(name: "a@me") { avatarUrl(size: 5) name } }')).toBe(true);
    // profiles (non-null) runs once; record below it is nullable.
    expect(matches('{ profiles(names: ["a@me"]) { record(type: "x") { key } } }')).toBe(true);
    expect(matches('{ nameCheck(name: "a@me") { valid } }')).toBe(true);
  });

  it('do not match where two errors may reach one field, or a propagated one meets another error', () => {
    expect(matches('{ profile(name: "a@me") { a: avatarUrl(size: 5) b: avatarUrl(size: 6) } }')).toBe(false);
    expect(matches('{ profile(name: "a@me") { ...F avatarUrl } } fragment F on Profile { avatarUrl }')).toBe(false);
    // The same field under a list runs once per item.
    expect(matches('{ profiles(names: ["a@me"]) { avatarUrl(size: 5) } }')).toBe(false);
    // A non-null root field beside another root field; edges (async, non-null) below searchProfiles.
    expect(matches('{ a: nameCheck(name: "a@me") { valid } b: profile(name: "b@me") { name } }')).toBe(false);
    expect(matches('{ searchProfiles(prefix: "a") { edges { cursor } } }')).toBe(false);
  });
});
