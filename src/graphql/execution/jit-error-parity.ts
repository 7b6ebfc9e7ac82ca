/**
 * Whether graphql-jit reports the errors of an operation exactly as uncompiled execution does.
 *
 * The two agree on errors of nullable fields: each is recorded where it happens, when it happens.
 * They part on errors that propagate (a field of non-null type, whose error nulls the nearest
 * nullable field above it): uncompiled execution records the first error to reach that field and
 * stops running the fields beside a synchronous one, while graphql-jit runs every field, records
 * every error, and lists the propagated ones after all others. With one propagated error and no
 * other error beside it, both answer the same.
 *
 * So an operation compiles by shape only if at most one of its fields can raise an error that
 * propagates, that field runs once (no list above it), and every other field that can raise is
 * above or below it (one of them failing keeps the other from running). A field can raise when it
 * takes client input (a root field, or arguments) or does I/O (an async resolver); a field that
 * reads what its parent loaded does not, and introspection fields never do.
 */
import {
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLSchema,
  getNamedType,
  getNullableType,
  isAbstractType,
  isInterfaceType,
  isListType,
  isNonNullType,
  isObjectType,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';

/** A field of the operation, as often as a fragment puts it there. */
interface Position {
  /** It can raise an error that propagates to a nullable field above it. */
  propagates: boolean;
  canRaise: boolean;
  /** The positions above it, outermost first. */
  ancestors: readonly Position[];
  /** A list is above it: it may run many times. */
  underList: boolean;
  /** Its value is a list. */
  isList: boolean;
}

export function jitErrorsMatch(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
): boolean {
  const rootType = schema.getRootType(operation.operation);
  if (rootType === undefined || rootType === null) return false;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  const positions: Position[] = [];
  collectPositions(schema, fragments, operation.selectionSet, rootType, [], true, positions);

  const propagating = positions.filter((position) => position.propagates);
  if (propagating.length === 0) return true;
  const [only] = propagating;
  if (propagating.length > 1 || only === undefined || only.underList) return false;
  return positions.every(
    (position) =>
      !position.canRaise || position === only || only.ancestors.includes(position) || position.ancestors.includes(only),
  );
}

function collectPositions(
  schema: GraphQLSchema,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
  selectionSet: SelectionSetNode,
  parentType: GraphQLNamedType,
  ancestors: readonly Position[],
  atRoot: boolean,
  into: Position[],
): void {
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) {
      // Introspection reads the schema: it never raises, nor does anything below it.
      if (selection.name.value.startsWith('__')) continue;
      const fields = fieldsNamed(schema, parentType, selection.name.value);
      const first = fields[0];
      if (first === undefined) continue;
      const canRaise = atRoot || fields.some(takesInputOrWaits);
      const position: Position = {
        canRaise,
        propagates: canRaise && fields.some((field) => isNonNullType(field.type)),
        ancestors,
        underList: ancestors.some((ancestor) => ancestor.isList),
        isList: fields.some((field) => isListType(getNullableType(field.type))),
      };
      into.push(position);
      if (selection.selectionSet !== undefined) {
        const childType = getNamedType(first.type);
        collectPositions(schema, fragments, selection.selectionSet, childType, [...ancestors, position], false, into);
      }
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      const type =
        selection.typeCondition === undefined ? parentType : schema.getType(selection.typeCondition.name.value);
      if (type !== undefined && type !== null) {
        collectPositions(schema, fragments, selection.selectionSet, type, ancestors, atRoot, into);
      }
    } else {
      const fragment = fragments.get(selection.name.value);
      const type = fragment === undefined ? undefined : schema.getType(fragment.typeCondition.name.value);
      if (fragment !== undefined && type !== undefined && type !== null) {
        collectPositions(schema, fragments, fragment.selectionSet, type, ancestors, atRoot, into);
      }
    }
  }
}

/** The field of that name on the type, and on each type it may be at run time (their resolvers run). */
function fieldsNamed(schema: GraphQLSchema, type: GraphQLNamedType, name: string): GraphQLField<unknown, unknown>[] {
  const types = isAbstractType(type) ? [type, ...schema.getPossibleTypes(type)] : [type];
  return types.flatMap((each) => {
    const field = isObjectType(each) || isInterfaceType(each) ? each.getFields()[name] : undefined;
    return field === undefined ? [] : [field];
  });
}

function takesInputOrWaits(field: GraphQLField<unknown, unknown>): boolean {
  return field.args.length > 0 || field.resolve?.constructor.name === 'AsyncFunction';
}
