/**
 * Shapes (src/graphql/execution/document-shape.ts) read from a text by the lexer are those of its parsed
 * document: a text of a compiled shape is not parsed, so the two must never differ.
 */
import fc from 'fast-check';
import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { shapeOf, textShape } from '../src/graphql/execution/document-shape.js';

/** The shape of the parsed text, or undefined where the text does not parse. */
function parsedShape(text: string) {
  try {
    return shapeOf(parse(text));
  } catch {
    return undefined;
  }
}

describe('the shape of a text', () => {
  it('is the shape of its parsed document, literal for literal', () => {
    for (const text of [
      '{ profile(name: "alice@acme") { name } }',
      // Escapes, a character outside the BMP, equal literals, a comment with a quote, CRLF, a BOM.
      '\ufeff# say "hi"\r\nquery Q { a: profile(name: "jos\\u00e9@caf\\u00e9") { name }\r\n b: nameCheck(name: "\\"q\\" \\\\ \\u{1F600} 😀") { valid } c: nameCheck(name: "jos\\u00e9@caf\\u00e9") { valid } }',
      '{ profiles(names: ["a@me", "b@me", ""]) { name } }',
    ]) {
      const shape = textShape(text);
      expect(shape).toBeDefined();
      expect(shape).toEqual(parsedShape(text));
    }
  });

  it('is undefined for texts without a plain string literal, with a block string, or that do not lex', () => {
    expect(textShape('{ __typename }')).toBeUndefined();
    expect(textShape('{ profile(name: """demo@me""") { name } }')).toBeUndefined();
    // Invalid escapes and a lone surrogate: the parser refuses them the same way.
    for (const text of ['{ profile(name: "\\q") { name } }', '{ profile(name: "\\ud800") { name } }', '{ a(b: "x']) {
      expect(textShape(text)).toBeUndefined();
      expect(() => parse(text)).toThrow(/Syntax Error/);
    }
  });

  it('agrees with the parser on any string written into a document, and matches a shape only where it parses', () => {
    const document = (literals: string[]) =>
      `{ ${literals.map((literal, i) => `a${i}: nameCheck(name: ${literal}) { valid }`).join('\n')} }`;
    // Characters that end strings, escape, open comments and selections, or lie outside the BMP.
    const unit = fc.constantFrom('a', 'é', '😀', '"', '\\', 'u', '0', '{', ')', '#', ' ', '\n', '\ud800');
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit, maxLength: 8 }), { minLength: 1, maxLength: 3 }),
        fc.boolean(),
        (values, raw) => {
          // Escaped as JSON (its escapes are GraphQL's) or written as they are.
          const text = document(values.map((value) => (raw ? `"${value}"` : JSON.stringify(value))));
          const lexed = textShape(text);
          const parsed = parsedShape(text);
          // A block string (three quotes meeting) has no lexed shape, by design.
          const hasBlock = parsed?.literals.some((literal) => literal.block) === true;
          if (parsed !== undefined) expect(lexed).toEqual(hasBlock ? undefined : parsed);
          // A text whose shape is that of a parsed document of the template parses: it stands in safely.
          const placeholders = new Map<string, number>();
          for (const literal of lexed?.literals ?? [])
            placeholders.set(literal.value, placeholders.get(literal.value) ?? placeholders.size);
          const numbered = (lexed?.literals ?? []).map((literal) => `"#${placeholders.get(literal.value)}"`);
          if (lexed !== undefined && numbered.length === values.length && lexed.text === document(numbered)) {
            expect(parsed).toEqual(lexed);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
