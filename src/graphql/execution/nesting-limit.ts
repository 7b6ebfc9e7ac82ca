/**
 * The stack a GraphQL document may cost, whatever a client sends. Before parsing, the text's
 * nesting depth is measured: graphql-js parses recursively, and a document nested a few thousand
 * levels deep overflows the stack. Such a document is a syntax error of the client's, refused
 * before any recursion.
 */
import { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';

/**
 * Braces, brackets and parentheses open at once. Legitimate documents nest a few levels
 * (MAX_DEPTH of graphql-armor.ts counts fields; arguments and lists add a few more).
 */
export const MAX_NESTING = 64;

/**
 * Yoga plugin: refuses documents nested deeper than MAX_NESTING. It goes after the plugins that
 * replace the parser (graphql-armor's limits), so that its check wraps theirs and runs first.
 */
export function nestingLimitPlugin(): Plugin {
  return {
    onParse({ parseFn, setParseFn }) {
      setParseFn((source, options) => {
        refuseDeepNesting(typeof source === 'string' ? source : source.body);
        return parseFn(source, options);
      });
    },
  };
}

/**
 * Throws a syntax error when brackets nest deeper than MAX_NESTING. Strings (plain and block)
 * and comments are skipped, so a bracket inside them does not count; the scan is linear and
 * allocates nothing.
 */
function refuseDeepNesting(text: string): void {
  let depth = 0;
  for (let i = 0; i < text.length; i += 1) {
    const char = text.charCodeAt(i);
    if (char === 0x23 /* # */) {
      while (i < text.length && text.charCodeAt(i) !== 0x0a && text.charCodeAt(i) !== 0x0d) i += 1;
    } else if (char === 0x22 /* " */) {
      i = endOfString(text, i);
    } else if (char === 0x7b || char === 0x5b || char === 0x28 /* { [ ( */) {
      depth += 1;
      if (depth > MAX_NESTING) {
        throw new GraphQLError(`Syntax Error: brackets nest more than ${MAX_NESTING} levels deep.`, {
          extensions: { code: 'GRAPHQL_PARSE_FAILED', http: { status: 400 } },
        });
      }
    } else if (char === 0x7d || char === 0x5d || char === 0x29 /* } ] ) */) {
      depth = Math.max(0, depth - 1);
    }
  }
}

/** The index of the closing quote of the string starting at `start` (or the text's end). */
function endOfString(text: string, start: number): number {
  if (text.startsWith('"""', start)) {
    // In a block string only \""" escapes; it does not end the string.
    let end = text.indexOf('"""', start + 3);
    while (end > 0 && text.charCodeAt(end - 1) === 0x5c) end = text.indexOf('"""', end + 3);
    return end < 0 ? text.length : end + 2;
  }
  for (let i = start + 1; i < text.length; i += 1) {
    const char = text.charCodeAt(i);
    if (char === 0x5c /* \ */) i += 1;
    else if (char === 0x22 || char === 0x0a || char === 0x0d) return i;
  }
  return text.length;
}
