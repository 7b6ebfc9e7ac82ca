/**
 * The shape of a document: its text with every string literal replaced by a placeholder numbered
 * by the literal's value, so documents that differ only in their string literals (a name written
 * into each document) share one. Equal literals share a placeholder, so a shape keeps which
 * literals are equal; a block string and a plain string of equal value get different ones
 * (graphql-js prints them apart). Numbers, enum values and names stay in the shape as written.
 */
import { type DocumentNode, Kind, Lexer, Source, type StringValueNode, type Token, TokenKind } from 'graphql';

/** A string literal of a document: its value, and where its text (quotes included) stands. */
export interface Literal {
  value: string;
  block: boolean;
  start: number;
  end: number;
  line: number;
  column: number;
}

/** A document's text with its string literals replaced by placeholders, and those literals. */
export interface DocumentShape {
  text: string;
  /** The document's string literals in the order of the text. */
  literals: readonly Literal[];
}

// Documents repeated verbatim come from Yoga's document cache as the same object, and every
// plugin that asks for a document's shape (validation, compiled execution) shares one walk.
const shapes = new WeakMap<DocumentNode, DocumentShape | null>();

/**
 * The shape of `document`; undefined when the document has no string literal (its text is its
 * own shape, and Yoga's cache already keeps repeated texts) or no locations.
 */
export function shapeOf(document: DocumentNode): DocumentShape | undefined {
  let shape = shapes.get(document);
  if (shape === undefined) {
    shape = computeShape(document) ?? null;
    shapes.set(document, shape);
  }
  return shape ?? undefined;
}

/** The text of `shapeOf(document)`. */
export function documentShape(document: DocumentNode): string | undefined {
  return shapeOf(document)?.text;
}

/**
 * The shape of the document `text` parses to, read by graphql-js's own lexer without parsing:
 * the string tokens are the string literals, at the same places and with the same values.
 * Undefined when the text has no plain string literal, has a block string, or does not lex (its
 * parse fails the same way).
 */
export function textShape(text: string): DocumentShape | undefined {
  const literals: Literal[] = [];
  const lexer = new Lexer(new Source(text));
  try {
    for (let token = lexer.advance(); token.kind !== TokenKind.EOF; token = lexer.advance()) {
      if (token.kind === TokenKind.BLOCK_STRING) return undefined;
      if (token.kind === TokenKind.STRING) literals.push(tokenLiteral(token));
    }
  } catch {
    return undefined;
  }
  return literals.length === 0 ? undefined : shapeFrom(text, literals);
}

function tokenLiteral(token: Token): Literal {
  const { value = '', start, end, line, column } = token;
  return { value, block: token.kind === TokenKind.BLOCK_STRING, start, end, line, column };
}

function computeShape(document: DocumentNode): DocumentShape | undefined {
  const source = document.loc?.source.body;
  if (source === undefined) return undefined;
  const nodes: StringValueNode[] = [];
  collectStringLiterals(document, nodes);
  const literals: Literal[] = [];
  for (const node of nodes) {
    if (node.loc === undefined) return undefined;
    const { start, end, startToken } = node.loc;
    literals.push({
      value: node.value,
      block: node.block === true,
      start,
      end,
      line: startToken.line,
      column: startToken.column,
    });
  }
  if (literals.length === 0) return undefined;
  literals.sort((a, b) => a.start - b.start);
  return shapeFrom(source, literals);
}

function shapeFrom(source: string, literals: readonly Literal[]): DocumentShape {
  const placeholders = new Map<string, number>();
  let text = '';
  let from = 0;
  for (const literal of literals) {
    const value = `${literal.block ? 'B' : 'S'}${literal.value}`;
    let placeholder = placeholders.get(value);
    if (placeholder === undefined) {
      placeholder = placeholders.size;
      placeholders.set(value, placeholder);
    }
    text += `${source.slice(from, literal.start)}"#${placeholder}"`;
    from = literal.end;
  }
  return { text: text + source.slice(from), literals };
}

function collectStringLiterals(node: unknown, into: StringValueNode[]): void {
  if (Array.isArray(node)) {
    for (const item of node) collectStringLiterals(item, into);
    return;
  }
  if (typeof node !== 'object' || node === null || !('kind' in node)) return;
  if (node.kind === Kind.STRING) {
    into.push(node as StringValueNode);
    return;
  }
  for (const key in node) {
    if (key === 'loc') continue;
    const child = (node as Record<string, unknown>)[key];
    if (typeof child === 'object' && child !== null) collectStringLiterals(child, into);
  }
}
