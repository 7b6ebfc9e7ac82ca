/**
 * Error locations of a plan compiled from one document, moved to another document of the same
 * shape. graphql-jit computes the line and column of every field when it compiles, so its errors
 * point into the document the plan was compiled from. Documents of one shape differ only in the
 * text of their plain string literals, which hold no line break: a field stands on the same line
 * in both, moved by how much longer or shorter the literals before it on that line are.
 */
import type { GraphQLError, SourceLocation } from 'graphql';
import type { Literal } from './document-shape.js';

/**
 * `errors` located in the document whose literals are `from`, located instead in the document of
 * the same shape whose literals (in the same order) are `to`.
 */
export function relocatedErrors(
  errors: readonly GraphQLError[],
  from: readonly Literal[],
  to: readonly Literal[],
): readonly GraphQLError[] {
  const shifts = from.map((literal, index) => lengthOf(to[index] ?? literal) - lengthOf(literal));
  if (shifts.every((shift) => shift === 0)) return errors;
  const moved = (location: SourceLocation): SourceLocation => {
    let column = location.column;
    from.forEach((literal, index) => {
      if (literal.line === location.line && literal.column < location.column) column += shifts[index] ?? 0;
    });
    return { line: location.line, column };
  };
  return errors.map((error) =>
    error.locations === undefined || error.locations.length === 0
      ? error
      : withLocations(error, error.locations.map(moved)),
  );
}

function lengthOf(literal: Literal): number {
  return literal.end - literal.start;
}

/** The same error (its class, message, path, cause, stack) at other locations. */
function withLocations(error: GraphQLError, locations: readonly SourceLocation[]): GraphQLError {
  const properties = Object.getOwnPropertyDescriptors(error);
  return Object.create(Object.getPrototypeOf(error), {
    ...properties,
    locations: { ...properties.locations, value: locations },
  }) as GraphQLError;
}
