/**
 * What a field's selection asks for, so a resolver can fetch what the client wants in one go.
 */
import { type FragmentDefinitionNode, type GraphQLResolveInfo, Kind, type SelectionSetNode } from 'graphql';

/** Whether any of `fieldNames` is selected directly under the resolved field (fragments included). */
export function selectsAnyOf(info: GraphQLResolveInfo, fieldNames: ReadonlySet<string>): boolean {
  return info.fieldNodes.some(
    (node) => node.selectionSet !== undefined && setSelects(node.selectionSet, fieldNames, info.fragments, new Set()),
  );
}

function setSelects(
  set: SelectionSetNode,
  fieldNames: ReadonlySet<string>,
  fragments: Record<string, FragmentDefinitionNode>,
  visited: Set<string>,
): boolean {
  return set.selections.some((selection) => {
    switch (selection.kind) {
      case Kind.FIELD:
        return fieldNames.has(selection.name.value);
      case Kind.INLINE_FRAGMENT:
        return setSelects(selection.selectionSet, fieldNames, fragments, visited);
      case Kind.FRAGMENT_SPREAD: {
        const name = selection.name.value;
        const fragment = fragments[name];
        if (fragment === undefined || visited.has(name)) return false;
        visited.add(name);
        return setSelects(fragment.selectionSet, fieldNames, fragments, visited);
      }
      default:
        return false;
    }
  });
}
