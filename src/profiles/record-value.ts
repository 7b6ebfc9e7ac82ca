/**
 * Record values that keep the order of their map entries.
 *
 * A map-valued record (social, link, crypto, ...) is answered in the order the operator gave
 * its entries. A JavaScript object does not keep that order for keys that look like array
 * indexes: `{"Blog": "…", "2024": "…"}` iterates, and serialises, as `2024, Blog`. So a map
 * with such a key is represented by a read-only Proxy whose own keys come in stored order;
 * `Object.entries`, `for…in` and `JSON.stringify` all follow it, and every other use sees a
 * plain object. Maps without such keys, nearly all of them, stay plain objects.
 */
import { type Node, parseTree } from 'jsonc-parser';

/** A map-valued record: string keys to string values, in stored order. */
type StringMap = Readonly<Record<string, string>>;

/** A record value: a string, or a map of string to string. */
export type RecordValue = string | StringMap;

/** Keys that JavaScript objects list first, in numeric order, whatever order they were added in. */
const ARRAY_INDEX = /^(?:0|[1-9][0-9]*)$/;

function isArrayIndex(key: string): boolean {
  // Nearly every key starts with a letter: one character settles it without the expression.
  const first = key.charCodeAt(0);
  return first >= 0x30 && first <= 0x39 && ARRAY_INDEX.test(key) && Number(key) < 2 ** 32 - 1;
}

/** An object with `entries` as its own properties, enumerated in exactly that order. */
export function orderedObject<V>(entries: ReadonlyArray<readonly [string, V]>): Readonly<Record<string, V>> {
  const target: Record<string, V> = {};
  for (const [key, value] of entries) {
    // A repeated key keeps its first position and its last value, as JSON.parse does.
    Object.defineProperty(target, key, { value, enumerable: true, configurable: true, writable: false });
  }
  Object.freeze(target);
  if (!entries.some(([key]) => isArrayIndex(key))) return target;
  const keys = [...new Set(entries.map(([key]) => key))];
  return new Proxy(target, { ownKeys: () => keys });
}

/**
 * Parses JSON text, keeping the key order of every object. JSON.parse does the work; only when
 * an object in the result has a key that looks like an array index (rare in this data) is the
 * text read again, so that those objects get their source order back.
 */
export function parseJsonKeepingOrder(text: string): unknown {
  const value: unknown = JSON.parse(text);
  return hasArrayIndexKey(value) ? parseOrdered(text) : value;
}

/** Whether JSON.parse may have reordered `value` or anything in it. */
export function hasArrayIndexKey(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) return value.some(hasArrayIndexKey);
  // for…in rather than Object.entries: no array per object (this runs on every map record read).
  const object = value as Record<string, unknown>;
  for (const key in object) {
    if (Object.hasOwn(object, key) && (isArrayIndex(key) || hasArrayIndexKey(object[key]))) return true;
  }
  return false;
}

/** Reads JSON text that JSON.parse has accepted as a syntax tree, objects in source order. */
export function parseOrdered(text: string): unknown {
  const root = parseTree(text, [], { disallowComments: true, allowTrailingComma: false });
  if (root === undefined) throw new SyntaxError('not JSON text');
  return valueOfNode(root);
}

function valueOfNode(node: Node): unknown {
  switch (node.type) {
    case 'object':
      return orderedObject(
        (node.children ?? []).map((property) => {
          const [keyNode, valueNode] = property.children ?? [];
          return [String(keyNode?.value), valueNode === undefined ? null : valueOfNode(valueNode)] as const;
        }),
      );
    case 'array':
      return (node.children ?? []).map(valueOfNode);
    default:
      return node.value;
  }
}
