/**
 * Error locations of a plan compiled from one document, moved to another document of the same
 * shape. graphql-jit computes the line and column of every field when it compiles, so its errors
 * point into the document the plan was compiled from. Documents of one shape differ only in the
 * text of their plain string literals, which hold no line break: a field stands on the same line
 * in both, moved by how much longer or shorter the literals before it on that line are.
 */
import type { GraphQLError, SourceLocation, StringValueNode } from 'graphql';

/** Where a plain string literal stands in its document, and how long its text is. */
export interface LiteralPlace {
  line: number;
  column: number;
  length: number;
}

export function literalPlaces(literals: readonly StringValueNode[]): LiteralPlace[] {
  return literals.map((literal) => ({
    line: literal.loc?.startToken.line ?? 0,
    column: literal.loc?.startToken.column ?? 0,
    length: (literal.loc?.end ?? 0) - (literal.loc?.start ?? 0),
  }));
}

/**
 * `errors` located in the document whose literals stand at `from`, located instead in the
 * document of the same shape whose literals (in the same order) are `to`.
 */
export function relocatedErrors(
  errors: readonly GraphQLError[],
  from: readonly LiteralPlace[],
  to: readonly LiteralPlace[],
): readonly GraphQLError[] {
  const shifts = from.map((place, index) => (to[index]?.length ?? place.length) - place.length);
  if (shifts.every((shift) => shift === 0)) return errors;
  const moved = (location: SourceLocation): SourceLocation => {
    let column = location.column;
    from.forEach((place, index) => {
      if (place.line === location.line && place.column < location.column) column += shifts[index] ?? 0;
    });
    return { line: location.line, column };
  };
  return errors.map((error) =>
    error.locations === undefined || error.locations.length === 0
      ? error
      : withLocations(error, error.locations.map(moved)),
  );
}

/** The same error (its class, message, path, cause, stack) at other locations. */
function withLocations(error: GraphQLError, locations: readonly SourceLocation[]): GraphQLError {
  const properties = Object.getOwnPropertyDescriptors(error);
  return Object.create(Object.getPrototypeOf(error), {
    ...properties,
    locations: { ...properties.locations, value: locations },
  }) as GraphQLError;
}
