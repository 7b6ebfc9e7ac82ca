/**
 * A field's answer written as JSON text straight from its value, without executing the operation.
 *
 * A GraphQL lookup of a profile without a kept answer (./profile-answers.ts; most lookups of a
 * large namespace) executed its selection over the profile, building a result object per profile
 * and per record and parsing each record's stored value for `raw`, then serialised the result. A
 * writer does what graphql-js's execution does for the selection — graphql-js's own field
 * collection and argument values, the schema's resolvers, type resolvers and serialisers, in the
 * engine's order — but writes the answer's text as it goes, and a record's `raw` as its stored
 * text where that is the text `JSON.stringify` would write (`StoredRecord.rawText`), so no result
 * object is built and no stored value parsed (docs/decisions.md, "GraphQL answers of a profile
 * written without execution"). A profile's
 * records asked only for their key, type and value are written from their stored text without
 * being split (./stored-records-writer.ts).
 *
 * It writes only answers without errors: a resolver that throws or returns a promise, a null
 * where the schema says non-null, a value a serialiser refuses — anything that would make the
 * engine add an error or wait — ends the writing, and the caller executes the operation instead,
 * so every error is the engine's own. The selection has no arguments, directives or variables
 * below the field (./profile-answers.ts decides which selections qualify), and its resolvers are
 * synchronous functions of their source and the process's configuration; none reads `info`
 * beyond what is given here (the field, its types, the schema and the document, no path).
 */
import {
  defaultTypeResolver,
  type FieldNode,
  type GraphQLAbstractType,
  type GraphQLField,
  GraphQLInt,
  type GraphQLLeafType,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLResolveInfo,
  GraphQLString,
  getArgumentValues,
  getNamedType,
  isAbstractType,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
} from 'graphql';
import { collectSubfields } from 'graphql/execution/collectFields.js';
import { isPromise } from 'graphql-yoga';
import { StoredRecord } from '../../profiles/stored-records.js';
import { memberPrefix, possibleObjectType, type WrittenDocument } from './answer-writing.js';
import { storedRecordsWriter } from './stored-records-writer.js';

/** Writes the answer of the field for `source`; undefined when only execution may answer. */
export type AnswerWriter = (source: unknown, context: unknown) => string | undefined;

/** Thrown inside a writer where execution would give an error or wait; the writer answers undefined. */
const NOT_WRITABLE: unique symbol = Symbol('not writable');

/**
 * Writes one value of a type as JSON text, or throws. Writers are made once per selection and
 * type, so that each value costs only the checks its type needs (as graphql-jit compiles them).
 */
type ValueWriter = (value: unknown, context: unknown) => string;

/**
 * A writer of `field`'s answer (the field's value being an object of `type`): the text
 * execution's result has under the field's response key, for the same value.
 */
export function answerWriter(document: WrittenDocument, type: GraphQLObjectType, field: FieldNode): AnswerWriter {
  let write: ValueWriter | undefined;
  return (source, context) => {
    try {
      write ??= objectWriter(document, type, [field]);
      return write(source, context);
    } catch {
      // NOT_WRITABLE, or a resolver's or serialiser's own error: execution answers it as the engine does.
      return undefined;
    }
  };
}

/** Writes an object of `type` with the fields `nodes` select on it, in the order execution answers them. */
function objectWriter(document: WrittenDocument, type: GraphQLObjectType, nodes: readonly FieldNode[]): ValueWriter {
  const { schema, fragments } = document;
  const fields: ValueWriter[] = [];
  for (const [responseKey, fieldNodes] of collectSubfields(schema, fragments, {}, type, nodes)) {
    const prefix = memberPrefix(fields.length, responseKey);
    const name = (fieldNodes[0] as FieldNode).name.value;
    if (name === '__typename') {
      const text = prefix + JSON.stringify(type.name);
      fields.push(() => text);
      continue;
    }
    const definition = type.getFields()[name];
    // A field the type does not have is skipped by execution too (validation refuses it first).
    if (definition !== undefined) fields.push(fieldWriter(document, type, definition, responseKey, fieldNodes, prefix));
  }
  const isTypeOf = type.isTypeOf ?? undefined;
  const info = resolveInfo(document, type, type.name, nodes, type);
  return (source, context) => {
    if (isTypeOf !== undefined) {
      const verdict = isTypeOf(source, context, info);
      if (isPromise(verdict) || !verdict) throw NOT_WRITABLE;
    }
    if (fields.length === 0) return '{}';
    let text = '';
    for (const field of fields) text += field(source, context);
    return `${text}}`;
  };
}

/** Writes `"<response key>":<value>` for one field of a source object. */
function fieldWriter(
  document: WrittenDocument,
  parent: GraphQLObjectType,
  definition: GraphQLField<unknown, unknown>,
  responseKey: string,
  nodes: readonly FieldNode[],
  prefix: string,
): ValueWriter {
  const info = resolveInfo(document, parent, responseKey, nodes, definition.type);
  const args = getArgumentValues(definition, nodes[0] as FieldNode, {});
  const value = valueWriter(document, definition.type, nodes, info);
  const resolve = definition.resolve;
  if (resolve !== undefined) return (source, context) => prefix + value(resolve(source, args, context, info), context);
  const name = definition.name;
  // graphql-js's default resolver: the property, called when it is a method.
  const read = (source: unknown, context: unknown): unknown => {
    if ((typeof source !== 'object' || source === null) && typeof source !== 'function') return undefined;
    const property: unknown = (source as Record<string, unknown>)[name];
    return typeof property === 'function' ? property.call(source, args, context, info) : property;
  };
  const storedRecords = storedRecordsWriter(document, definition, nodes, info);
  if (storedRecords !== undefined) {
    return (source, context) => prefix + (storedRecords(source, context) ?? value(read(source, context), context));
  }
  if (name !== 'raw' || getNamedType(definition.type).name !== 'JSON') {
    return (source, context) => prefix + value(read(source, context), context);
  }
  // A record's value as its stored text, where that is the text JSON.stringify would write.
  return (source, context) => {
    const stored = source instanceof StoredRecord ? source.rawText : undefined;
    return prefix + (stored ?? value(read(source, context), context));
  };
}

/** Writes values of `type`: null checks, lists, leaves by their serialiser, objects by their runtime type. */
function valueWriter(
  document: WrittenDocument,
  type: GraphQLOutputType,
  nodes: readonly FieldNode[],
  info: GraphQLResolveInfo,
): ValueWriter {
  if (isNonNullType(type)) {
    const inner = valueWriter(document, type.ofType, nodes, info);
    return (value, context) => {
      if (value == null) throw NOT_WRITABLE;
      return inner(value, context);
    };
  }
  const write = nonNullWriter(document, type, nodes, info);
  return (value, context) => {
    if (value == null) return 'null';
    if (typeof value === 'object' || typeof value === 'function') {
      if (value instanceof Error || isPromise(value)) throw NOT_WRITABLE;
    }
    return write(value, context);
  };
}

/** Writes a value of a nullable type that is not null, not an error and not a promise. */
function nonNullWriter(
  document: WrittenDocument,
  type: GraphQLOutputType,
  nodes: readonly FieldNode[],
  info: GraphQLResolveInfo,
): ValueWriter {
  if (isListType(type)) {
    const item = valueWriter(document, type.ofType, nodes, info);
    return (value, context) => {
      if (!Array.isArray(value)) throw NOT_WRITABLE;
      if (value.length === 0) return '[]';
      let text = '[';
      for (let i = 0; i < value.length; i += 1) text += (i === 0 ? '' : ',') + item(value[i], context);
      return `${text}]`;
    };
  }
  if (isLeafType(type)) return leafWriter(type);
  if (isAbstractType(type)) return abstractWriter(document, type, nodes, info);
  if (isObjectType(type)) return objectWriter(document, type, nodes);
  throw NOT_WRITABLE;
}

/** Writes what the type's serialiser gives; String and Int values skip it where it returns them as they are. */
function leafWriter(type: GraphQLLeafType): ValueWriter {
  const serialized = (value: unknown): string => {
    const result = type.serialize(value);
    const text = result == null ? undefined : JSON.stringify(result);
    if (text === undefined) throw NOT_WRITABLE;
    return text;
  };
  if (type === GraphQLString) return (value) => (typeof value === 'string' ? JSON.stringify(value) : serialized(value));
  if (type === GraphQLInt) return (value) => (isInt32(value) ? String(value) : serialized(value));
  return serialized;
}

function isInt32(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value <= 2147483647 && value >= -2147483648;
}

/** Writes a value of an interface or union by the object type its type resolver names. */
function abstractWriter(
  document: WrittenDocument,
  type: GraphQLAbstractType,
  nodes: readonly FieldNode[],
  info: GraphQLResolveInfo,
): ValueWriter {
  const byType = new Map<string, ValueWriter>();
  const resolveType = type.resolveType ?? defaultTypeResolver;
  return (value, context) => {
    const name = resolveType(value, context, info, type);
    if (typeof name !== 'string') throw NOT_WRITABLE;
    let write = byType.get(name);
    if (write === undefined) {
      const runtime = possibleObjectType(document.schema, type, name);
      if (runtime === undefined) throw NOT_WRITABLE;
      write = objectWriter(document, runtime, nodes);
      byType.set(name, write);
    }
    return write(value, context);
  };
}

/** What resolvers get as `info`: the field and the document, without a path (no resolver here reads one). */
function resolveInfo(
  document: WrittenDocument,
  parent: GraphQLObjectType,
  responseKey: string,
  nodes: readonly FieldNode[],
  returnType: GraphQLOutputType,
): GraphQLResolveInfo {
  return {
    fieldName: (nodes[0] as FieldNode).name.value,
    fieldNodes: nodes,
    returnType,
    parentType: parent,
    path: { prev: undefined, key: responseKey, typename: parent.name },
    schema: document.schema,
    fragments: document.fragments,
    rootValue: undefined,
    operation: document.operation,
    variableValues: {},
  };
}
