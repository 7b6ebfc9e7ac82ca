/**
 * The Pothos schema builder: its context type and scalars, nothing else. Types register
 * themselves on it from their own modules under ./types and ./queries; ./schema.ts assembles them.
 */
import SchemaBuilder from '@pothos/core';
import { Kind, valueFromASTUntyped } from 'graphql';
import type { GraphQLContext } from './context.js';

export const builder = new SchemaBuilder<{
  Context: GraphQLContext;
  Scalars: { JSON: { Input: unknown; Output: unknown } };
  // Fields are non-null unless they say otherwise: absent data is the exception in this API.
  DefaultFieldNullability: false;
}>({
  defaultFieldNullability: false,
});

builder.scalarType('JSON', {
  description: 'Any JSON value, exactly as stored (a record value is a string or an object of string to string).',
  serialize: (value) => value,
  parseValue: (value) => value,
  parseLiteral: (ast, variables) => {
    if (ast.kind === Kind.NULL) return null;
    return valueFromASTUntyped(ast, variables ?? undefined);
  },
});
