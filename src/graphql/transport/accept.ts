/**
 * Which media type Yoga answers a request with, read from its `Accept` header exactly as Yoga's
 * result processors read it (graphql-yoga's use-result-processor.ts and accept.ts): white space
 * removed, lower-cased, split on commas, entries with a charset other than UTF-8 dropped, quality
 * values ignored; the JSON processor is tried last, so it wins whenever any entry matches a JSON
 * type, and then the first such entry decides: `application/json` where it matches, else
 * `application/graphql-response+json`. The HTTP layer uses it to decide which requests it may
 * answer itself (src/graphql/transport/over-http.ts); the status of an error depends on the type chosen.
 */

export type JsonMediaType = 'application/json' | 'application/graphql-response+json';

const STREAM_TYPES = ['text/event-stream', 'multipart/mixed'] as const;

/** The media types a client accepts, in its order (Yoga's getMediaTypesForRequestInOrder, not reversed). */
function acceptedMediaTypes(accept: string | undefined): string[] {
  const types: string[] = [];
  for (const entry of (accept || '*/*').replace(/\s/g, '').toLowerCase().split(',')) {
    const [type = '', ...params] = entry.split(';');
    const charset = params.find((param) => param.includes('charset=')) ?? 'charset=utf-8';
    if (charset === 'charset=utf-8') types.push(type);
  }
  return types;
}

/** Whether the client's entry `asked` (which may hold wildcards) covers the type `offered`. */
function covers(asked: string, offered: string): boolean {
  const [askedType, askedSubtype] = asked.split('/');
  const [type, subtype] = offered.split('/');
  return (askedType === '*' || askedType === type) && (askedSubtype === '*' || askedSubtype === subtype);
}

interface AcceptReading {
  json: JsonMediaType | undefined;
  stream: boolean;
}

function read(accept: string | undefined): AcceptReading {
  const asked = acceptedMediaTypes(accept);
  return {
    json: firstJsonType(asked),
    stream: asked.some((type) => STREAM_TYPES.some((offered) => covers(type, offered))),
  };
}

function firstJsonType(asked: readonly string[]): JsonMediaType | undefined {
  for (const type of asked) {
    if (covers(type, 'application/json')) return 'application/json';
    if (covers(type, 'application/graphql-response+json')) return 'application/graphql-response+json';
  }
  return undefined;
}

/**
 * Clients send the same few Accept headers over and over, so their readings are kept; a client
 * that varies its header only refills this small table.
 */
const READINGS_KEPT = 64;
const readings = new Map<string | undefined, AcceptReading>();

function reading(accept: string | undefined): AcceptReading {
  let known = readings.get(accept);
  if (known === undefined) {
    if (readings.size >= READINGS_KEPT) readings.clear();
    known = read(accept);
    readings.set(accept, known);
  }
  return known;
}

/**
 * The JSON media type Yoga would answer a single result with; undefined when it would answer
 * something else: the GraphiQL page (a GET accepting HTML), or no JSON type at all (406).
 */
export function jsonMediaTypeFor(method: string | undefined, accept: string | undefined): JsonMediaType | undefined {
  if (method === 'GET' && accept?.includes('text/html') === true) return undefined;
  return reading(accept).json;
}

/** Whether the client accepts a streamed answer (server-sent events or multipart). */
export function mayStream(accept: string | undefined): boolean {
  return reading(accept).stream;
}
