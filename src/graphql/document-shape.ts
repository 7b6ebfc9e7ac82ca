/**
 * The shape of a document: its text with every string literal replaced by a placeholder numbered
 * by the literal's value, so documents that differ only in their string literals (a name written
 * into each document) share one. Equal literals share a placeholder, so a shape keeps which
 * literals are equal; a block string and a plain string of equal value get different ones
 * (graphql-js prints them apart). Numbers, enum values and names stay in the shape as written.
 */
import { type DocumentNode, Kind, type StringValueNode } from 'graphql';

/** A document's text with its string literals replaced by placeholders, and those literals. */
export interface DocumentShape {
  text: string;
  /** The document's string literals in the order of the text. */
  literals: readonly StringValueNode[];
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

/**
 * The document's text with every string literal replaced by a placeholder numbered by its
 * value; undefined when the document has no string literal or no locations.
 */
export function documentShape(document: DocumentNode): string | undefined {
  return shapeOf(document)?.text;
}

function computeShape(document: DocumentNode): DocumentShape | undefined {
  const source = document.loc?.source.body;
  if (source === undefined) return undefined;
  const literals: StringValueNode[] = [];
  collectStringLiterals(document, literals);
  if (literals.length === 0) return undefined;
  literals.sort((a, b) => (a.loc?.start ?? 0) - (b.loc?.start ?? 0));

  const placeholders = new Map<string, number>();
  let text = '';
  let from = 0;
  for (const literal of literals) {
    if (literal.loc === undefined) return undefined;
    const value = `${literal.block === true ? 'B' : 'S'}${literal.value}`;
    let placeholder = placeholders.get(value);
    if (placeholder === undefined) {
      placeholder = placeholders.size;
      placeholders.set(value, placeholder);
    }
    text += `${source.slice(from, literal.loc.start)}"#${placeholder}"`;
    from = literal.loc.end;
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
