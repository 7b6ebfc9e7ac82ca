/**
 * Literal hoisting: the document of one operation rewritten so that its string literals are
 * variables, declared on the operation with the input type of their position. Every document of
 * the same shape (./document-shape.ts) then has the same hoisted document, and one compiled plan
 * answers them all, given each document's literals as the values of those variables.
 *
 * A variable answers exactly like the literal it replaces only where both are coerced alike:
 * String and ID read a literal (`parseLiteral`) and a variable's value (`parseValue`) to the same
 * string, and a list position wraps a single value either way. So a document is hoisted only when
 * every string literal of the operation's definitions is a field argument (or within one) whose
 * named type is String or ID, and none is a block string (whose text may span lines, which would
 * move the lines of the fields after it; see ./literal-locations.ts). Literals elsewhere (in a
 * variable's default value, in a directive's argument) leave the document as it is.
 *
 * graphql-jit decides `@skip` and `@include` when the plan runs, but collects the fields first:
 * a field under `@skip(if: true)` takes its place in the answer's order before the same field
 * further on, and a fragment spread under it counts as visited, so a later spread of the same
 * fragment is left out (graphql-js skips the node before either). So a selection under a literal
 * condition is dropped, or kept without it, as graphql-js would, and a document with any other
 * directive on its selections (a condition on a variable) is left as it is.
 */
import {
  BREAK,
  type DefinitionNode,
  type DocumentNode,
  GraphQLID,
  type GraphQLInputType,
  type GraphQLSchema,
  GraphQLString,
  getNamedType,
  getOperationAST,
  Kind,
  type OperationDefinitionNode,
  parseType,
  type SelectionNode,
  TypeInfo,
  type VariableDefinitionNode,
  type VariableNode,
  visit,
  visitWithTypeInfo,
} from 'graphql';
import type { Literal } from './document-shape.js';

/** A variable of a hoisted document and the literal (by its index in the text) it stands for. */
export interface HoistedVariable {
  name: string;
  literal: number;
}

export interface HoistedDocument {
  /** The operation (with its hoisted variables declared) and every fragment. */
  document: DocumentNode;
  operation: OperationDefinitionNode;
  variables: readonly HoistedVariable[];
}

/**
 * The hoisted form of `document` for the operation `operationName`, whose string literals in the
 * order of the text are `literals`; undefined when the operation is not a query or a literal
 * cannot be hoisted.
 */
export function hoistLiterals(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  literals: readonly Literal[],
): HoistedDocument | undefined {
  const operation = getOperationAST(document, operationName);
  if (operation?.operation !== 'query') return undefined;
  if (literals.some((literal) => literal.block)) return undefined;

  const definitions = document.definitions.filter(
    (definition) => definition === operation || definition.kind === Kind.FRAGMENT_DEFINITION,
  );
  const indexAt = new Map(literals.map((literal, index) => [literal.start, index]));
  const namePrefix = unusedVariablePrefix(document);
  const variables: Array<HoistedVariable & { type: GraphQLInputType }> = [];
  // Equal values at positions of one type share a variable, as the shape makes them equal.
  const variableFor = new Map<string, string>();
  let hoistable = true;

  const includedSelection = <T extends SelectionNode>(node: T): T | null | typeof BREAK | undefined => {
    const included = literalCondition(node);
    if (included === undefined) {
      hoistable = false;
      return BREAK;
    }
    if (!included) return null;
    return node.directives === undefined || node.directives.length === 0 ? undefined : { ...node, directives: [] };
  };
  const typeInfo = new TypeInfo(schema);
  const hoisted = visit(
    { kind: Kind.DOCUMENT, definitions },
    visitWithTypeInfo(typeInfo, {
      Field: includedSelection,
      InlineFragment: includedSelection,
      FragmentSpread: includedSelection,
      Directive() {
        hoistable = false;
        return BREAK;
      },
      StringValue(node): VariableNode | undefined {
        const type = typeInfo.getInputType();
        const literal = indexAt.get(node.loc?.start ?? -1);
        if (!isFieldArgument(typeInfo) || !isStringOrId(type) || literal === undefined) {
          hoistable = false;
          return undefined;
        }
        const key = `${String(type)}\u0000${node.value}`;
        let name = variableFor.get(key);
        if (name === undefined) {
          name = `${namePrefix}${variables.length}`;
          variableFor.set(key, name);
          variables.push({ name, literal, type });
        }
        return { kind: Kind.VARIABLE, name: { kind: Kind.NAME, value: name } };
      },
    }),
  );
  if (!hoistable) return undefined;

  const hoistedDefinitions = hoisted.definitions.map((definition) => declared(definition, variables));
  const hoistedOperation = hoistedDefinitions.find((definition) => definition.kind === Kind.OPERATION_DEFINITION);
  if (hoistedOperation?.kind !== Kind.OPERATION_DEFINITION) return undefined;
  return {
    document: { ...hoisted, definitions: hoistedDefinitions },
    operation: hoistedOperation,
    variables: variables.map(({ name, literal }) => ({ name, literal })),
  };
}

/**
 * Whether graphql-js includes `selection` (its `shouldIncludeNode`) when that depends on literal
 * `@skip`/`@include` conditions only; undefined otherwise.
 */
function literalCondition(selection: SelectionNode): boolean | undefined {
  let included = true;
  for (const directive of selection.directives ?? []) {
    const name = directive.name.value;
    const condition = directive.arguments?.find((argument) => argument.name.value === 'if')?.value;
    if ((name !== 'skip' && name !== 'include') || condition?.kind !== Kind.BOOLEAN) return undefined;
    if (condition.value === (name === 'skip')) included = false;
  }
  return included;
}

function isFieldArgument(typeInfo: TypeInfo): boolean {
  return typeInfo.getArgument() !== null && typeInfo.getDirective() === null;
}

function isStringOrId(type: GraphQLInputType | null | undefined): type is GraphQLInputType {
  const named = type == null ? undefined : getNamedType(type);
  return named === GraphQLString || named === GraphQLID;
}

/** The operation with the hoisted variables declared after the client's own. */
function declared(
  definition: DefinitionNode,
  variables: ReadonlyArray<{ name: string; type: GraphQLInputType }>,
): DefinitionNode {
  if (definition.kind !== Kind.OPERATION_DEFINITION) return definition;
  const hoisted: VariableDefinitionNode[] = variables.map(({ name, type }) => ({
    kind: Kind.VARIABLE_DEFINITION,
    variable: { kind: Kind.VARIABLE, name: { kind: Kind.NAME, value: name } },
    type: parseType(String(type), { noLocation: true }),
  }));
  const operation: OperationDefinitionNode = {
    ...definition,
    variableDefinitions: [...(definition.variableDefinitions ?? []), ...hoisted],
  };
  return operation;
}

/**
 * A prefix no variable name of the document starts with, so names made from it never meet a
 * client's variable (in this document or in any of the same shape, which has the same names).
 */
export function unusedVariablePrefix(document: DocumentNode): string {
  const names: string[] = [];
  visit(document, {
    Variable(node) {
      names.push(node.name.value);
    },
  });
  let prefix = 'literal';
  while (names.some((name) => name.startsWith(prefix))) prefix = `_${prefix}`;
  return prefix;
}
