/**
 * A profile's `records` written straight from their stored text, for the answer writer
 * (./answer-writer.ts). Splitting a profile's records text into record objects and writing each
 * record's fields through the writer's per-type closures was the largest part of a written
 * profile answer (docs/decisions.md, "GraphQL answers of a profile written without execution");
 * a selection that asks each record only for `key`, `type` and `raw`, the
 * same on every record type, is the stored text sliced and joined (`recordsAnswerText` in
 * src/profiles/stored-records.ts), where the text allows it.
 *
 * What makes that the text execution answers: the field reads the property `records` of a
 * `Profile` (no resolver), which are the records split from `recordsJson`; each record type's
 * `key`, `type` and `raw` read the record's own properties (no resolver), `String` for the first
 * two and the `JSON` scalar for `raw`, which the writer writes as the stored text where that is
 * the text JSON.stringify would write (`StoredRecord.rawText`); and every record type selects
 * the same fields, so the type the interface's type resolver names changes only `__typename`. The
 * resolver is still asked for every record, with the record the split would give, as the writer's
 * abstract types ask it: a name that is not one of the interface's object types, or a promise,
 * gives up, and execution answers with its error. A resolver that declares its answer depends on
 * the record's type and shape alone (`RESOLVED_BY_TYPE_AND_SHAPE`, as the service's record variants
 * do) is asked once per type and shape instead, without a record object per record; one that
 * declares it names one of the interface's object types for every record, at once
 * (`NAMES_A_RECORD_TYPE_FOR_EVERY_RECORD`, as the service's do), is not asked at all when the
 * selection has no `__typename`: execution would only have checked the name, and asking for every
 * record costs a call per record on every lookup.
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
} from 'graphql';
import { collectSubfields } from 'graphql/execution/collectFields.js';
import { Profile } from '../../profiles/profile.js';
import {
  NAMES_A_RECORD_TYPE_FOR_EVERY_RECORD,
  RESOLVED_BY_TYPE_AND_SHAPE,
  type RecordPartField,
  type RecordTypeNamer,
  recordsAnswerText,
  type StoredShape,
} from '../../profiles/stored-records.js';
import { memberPrefix, possibleObjectType, type WrittenDocument } from './answer-writing.js';

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
  if (
    !fields.some(({ part }) => part === 'typename') &&
    item.extensions[NAMES_A_RECORD_TYPE_FOR_EVERY_RECORD] === true
  ) {
    // Nothing to ask the resolver for: no name is written, and its declaration says none is refused.
    return (source) => (source instanceof Profile ? recordsAnswerText(source.recordsJson, fields) : undefined);
  }
  const names = typeNames(document.schema, item);
  const resolveType = item.resolveType ?? defaultTypeResolver;
  const nameOf = (record: unknown, context: unknown) => {
    const name = resolveType(record, context, info, item);
    return typeof name === 'string' ? names(name) : undefined;
  };
  if (item.extensions[RESOLVED_BY_TYPE_AND_SHAPE] === true) {
    const namer = byTypeAndShape(nameOf);
    return (source) => (source instanceof Profile ? recordsAnswerText(source.recordsJson, fields, namer) : undefined);
  }
  return (source, context) => {
    if (!(source instanceof Profile)) return undefined;
    const namer: RecordTypeNamer = { from: 'record', name: (record) => nameOf(record, context) };
    return recordsAnswerText(source.recordsJson, fields, namer);
  };
}

/** Distinct record types whose names are kept per shape; past it, the resolver is asked each time. */
const MAX_KEPT_TYPE_NAMES = 256;

/**
 * A namer that asks the resolver once per record type and shape, as the resolver's declaration
 * allows, with a record of just that type and shape (it reads nothing else).
 */
function byTypeAndShape(nameOf: (record: unknown, context: unknown) => string | undefined): RecordTypeNamer {
  const kept: Record<StoredShape, Map<string, string | undefined>> = {
    string: new Map(),
    stringMap: new Map(),
    other: new Map(),
  };
  return {
    from: 'typeAndShape',
    name(type, shape) {
      const names = kept[shape];
      if (names.has(type)) return names.get(type);
      const name = nameOf({ type, shape }, undefined);
      if (names.size < MAX_KEPT_TYPE_NAMES) names.set(type, name);
      return name;
    },
  };
}

/** The JSON text of an object type name of `item`; undefined for any other name. Kept per name. */
function typeNames(schema: GraphQLSchema, item: GraphQLAbstractType): (name: string) => string | undefined {
  const texts = new Map<string, string>();
  return (name) => {
    let text = texts.get(name);
    if (text === undefined) {
      if (possibleObjectType(schema, item, name) === undefined) return undefined;
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
      const prefix = memberPrefix(fields.length, responseKey);
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
