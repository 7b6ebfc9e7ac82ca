/**
 * The Pothos schema builder: its context type and scalars, and the types of the refs the schema
 * modules hand each other. Nothing registers on a builder by being imported: ./schema.ts creates
 * one and calls each module's `register…` function on it, in the order the schema is printed.
 */
import SchemaBuilder from '@pothos/core';
import { Kind, valueFromASTUntyped } from 'graphql';
import type { GraphQLContext } from './context.js';

interface UserTypes {
  Context: GraphQLContext;
  Scalars: { JSON: { Input: unknown; Output: unknown } };
  // Fields are non-null unless they say otherwise: absent data is the exception in this API.
  DefaultFieldNullability: false;
}

type Types = PothosSchemaTypes.ExtendDefaultTypes<UserTypes>;
export type Builder = PothosSchemaTypes.SchemaBuilder<Types>;
/** An object type whose resolvers receive a `T`, as one module passes it to the next. */
export type ObjectOf<T> = PothosSchemaTypes.ObjectRef<Types, T>;
/** An interface type whose resolvers receive a `T`. */
export type InterfaceOf<T> = PothosSchemaTypes.InterfaceRef<Types, T>;

/**
 * A new builder with the JSON scalar, which its type parameters declare and so every builder has.
 * A new one per schema: a schema built twice (in a test, say) cannot see the other's types.
 */
export function createBuilder(): Builder {
  const builder = new SchemaBuilder<UserTypes>({ defaultFieldNullability: false });
  builder.scalarType('JSON', {
    description: 'Any JSON value, exactly as stored (a record value is a string or an object of string to string).',
    serialize: (value) => value,
    parseValue: (value) => value,
    parseLiteral: (ast, variables) => {
      if (ast.kind === Kind.NULL) return null;
      return valueFromASTUntyped(ast, variables ?? undefined);
    },
  });
  return builder;
}
