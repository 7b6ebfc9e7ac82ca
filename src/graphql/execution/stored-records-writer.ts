/**
 * A profile's `records` written straight from their stored text, for the answer writer
 * (./answer-writer.ts). Splitting a profile's records text into record objects and writing each
 * record's fields through the writer's per-type closures was the largest part of a written
 * profile answer (about 7 µs of the serving thread's CPU a lookup, bench/README.md "Issue 25,
 * seventeenth round"); a selection that asks each record only for `key`, `type` and `raw`, the
 * same on every record type, is the stored text sliced and joined (`recordsAnswerText` in
 * src/profiles/stored-records.ts), where the text allows it.
 *
 * What makes that the text execution answers: the field reads the property `records` of a
 * `Profile` (no resolver), which are the records split from `recordsJson`; each record type's
 * `key`, `type` and `raw` read the record's own properties (no resolver), `String` for the first
 * two and the `JSON` scalar for `raw`, which the writer writes as the stored text where that is
 * the text JSON.stringify would write (`StoredRecord.rawText`); and every record type selects
 * the same fields, so the type the interface's type resolver names changes only `__typename`. The
 * resolver is still called for every record, with the record the split would give, as the
 * writer's abstract types call it: a name that is not one of the interface's object types, or a
 * promise, gives up, and execution answers with its error.
 */
import {
  defaultTypeResolver,
  type FieldNode,
  type GraphQLAbstractType,
  type GraphQLField,
  type GraphQLOutputType,
  type GraphQLResolveInfo,
  type GraphQLSchema,
  GraphQLString,
  getNamedType,
  isAbstractType,
  isListType,
  isNonNullType,
  isObjectType,
} from 'graphql';
import { collectSubfields } from 'graphql/execution/collectFields.js';
import { Profile } from '../../profiles/profile.js';
import { type RecordPartField, recordsAnswerText, type StoredRecord } from '../../profiles/stored-records.js';
import type { WrittenDocument } from './answer-writer.js';

/** Writes a profile's records as the field's answer; undefined where the writer writes them as values. */
export type RecordsTextWriter = (source: unknown, context: unknown) => string | undefined;

/** A record field that is one part of the stored record, with the named type it must have. */
const PART_TYPES: Readonly<Record<string, string>> = { key: 'String', type: 'String', raw: 'JSON' };

/**
 * A writer of `definition`'s answer from the stored text, when the field is a profile's `records`
 * and the selection `nodes` makes on them qualifies (see the header); undefined otherwise.
 */
export function storedRecordsWriter(
  document: WrittenDocument,
  definition: GraphQLField<unknown, unknown>,
  nodes: readonly FieldNode[],
  info: GraphQLResolveInfo,
): RecordsTextWriter | undefined {
  if (definition.name !== 'records' || definition.resolve !== undefined) return undefined;
  const fields = partFields(document, definition.type, nodes);
  if (fields === undefined) return undefined;
  const item = getNamedType(definition.type) as GraphQLAbstractType;
  const names = typeNames(document.schema, item);
  return (source, context) => {
    if (!(source instanceof Profile)) return undefined;
    const typename = (record: StoredRecord) => {
      const name = (item.resolveType ?? defaultTypeResolver)(record, context, info, item);
      return typeof name === 'string' ? names(name) : undefined;
    };
    return recordsAnswerText(source.recordsJson, fields, typename);
  };
}

/** The JSON text of an object type name of `item`; undefined for any other name. Kept per name. */
function typeNames(schema: GraphQLSchema, item: GraphQLAbstractType): (name: string) => string | undefined {
  const texts = new Map<string, string>();
  return (name) => {
    let text = texts.get(name);
    if (text === undefined) {
      const runtime = schema.getType(name);
      if (!isObjectType(runtime) || !schema.isSubType(item, runtime)) return undefined;
      text = JSON.stringify(name);
      texts.set(name, text);
    }
    return text;
  };
}

/** The fields every type of the list's abstract item type selects, when all are the same parts. */
function partFields(
  { schema, fragments }: WrittenDocument,
  type: GraphQLOutputType,
  nodes: readonly FieldNode[],
): RecordPartField[] | undefined {
  const list = isNonNullType(type) ? type.ofType : type;
  if (!isListType(list)) return undefined;
  const item = getNamedType(list.ofType);
  if (!isAbstractType(item)) return undefined;
  let common: RecordPartField[] | undefined;
  for (const runtime of schema.getPossibleTypes(item)) {
    if (runtime.isTypeOf != null) return undefined;
    const fields: RecordPartField[] = [];
    for (const [responseKey, fieldNodes] of collectSubfields(schema, fragments, {}, runtime, nodes)) {
      const name = (fieldNodes[0] as FieldNode).name.value;
      const prefix = `${fields.length === 0 ? '{' : ','}${JSON.stringify(responseKey)}:`;
      if (name === '__typename') {
        fields.push({ prefix, part: 'typename' });
        continue;
      }
      const field = runtime.getFields()[name];
      if (field === undefined || !isPartField(field)) return undefined;
      fields.push({ prefix, part: name as RecordPartField['part'] });
    }
    if (fields.length === 0 || (common !== undefined && !sameFields(common, fields))) return undefined;
    common = fields;
  }
  return common;
}

/** `key`, `type` or `raw`, read from the record itself, of the type the stored text is written as. */
function isPartField(field: GraphQLField<unknown, unknown>): boolean {
  const expected = PART_TYPES[field.name];
  if (expected === undefined || field.resolve !== undefined) return false;
  const named = getNamedType(field.type);
  return expected === 'String' ? named === GraphQLString : named.name === expected;
}

function sameFields(a: readonly RecordPartField[], b: readonly RecordPartField[]): boolean {
  return a.length === b.length && a.every((field, i) => field.prefix === b[i]?.prefix && field.part === b[i]?.part);
}
