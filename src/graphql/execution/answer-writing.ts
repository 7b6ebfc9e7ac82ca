/**
 * What the two answer writers (./answer-writer.ts and ./stored-records-writer.ts) share: the
 * document they write for, the JSON text before an object's member, and which object type a type
 * resolver's answer stands for, decided as execution decides it.
 */
import {
  type FragmentDefinitionNode,
  type GraphQLAbstractType,
  type GraphQLObjectType,
  type GraphQLSchema,
  isObjectType,
  type OperationDefinitionNode,
} from 'graphql';

/** The document around the field: what graphql-js's field collection and `info` need. */
export interface WrittenDocument {
  schema: GraphQLSchema;
  operation: OperationDefinitionNode;
  fragments: Readonly<Record<string, FragmentDefinitionNode>>;
}

/** The text before the member `responseKey` of an object with `index` members before it: `{"k":` or `,"k":`. */
export function memberPrefix(index: number, responseKey: string): string {
  return `${index === 0 ? '{' : ','}${JSON.stringify(responseKey)}:`;
}

/**
 * The object type a type resolver's `name` stands for as a value of `abstract`; undefined for a
 * name that is no object type of it, where execution answers with an error.
 */
export function possibleObjectType(
  schema: GraphQLSchema,
  abstract: GraphQLAbstractType,
  name: string,
): GraphQLObjectType | undefined {
  const runtime = schema.getType(name);
  return isObjectType(runtime) && schema.isSubType(abstract, runtime) ? runtime : undefined;
}
