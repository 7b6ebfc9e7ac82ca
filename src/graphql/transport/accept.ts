/**
 * Which media type Yoga answers a request with, read from its `Accept` header exactly as Yoga's
 * result processors read it (graphql-yoga's use-result-processor.ts and accept.ts): white space
 * removed, lower-cased, split on commas, entries with a charset other than UTF-8 dropped, quality
 * values ignored; the JSON processor is tried last, so it wins whenever any entry matches a JSON
 * type, and then the first such entry decides: `application/json` where it matches, else
 * `application/graphql-response+json`. The HTTP layer uses it to decide which requests it may
 * answer itself (src/graphql/transport/over-http.ts); the status of an error depends on the type chosen.
 *
 * Yoga ignores quality values, so `text/event-stream;q=0` ("anything but a stream") got a stream.
 * acceptQualityPlugin removes the entries a client refuses (`q=0`) before Yoga reads the header,
 * and answers 406 when none is left; the HTTP layer hands such requests to Yoga.
 */
import type { Plugin } from 'graphql-yoga';

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
  /** Some entry has quality zero (acceptQualityPlugin's business). */
  refuses: boolean;
}

function read(accept: string | undefined): AcceptReading {
  const asked = acceptedMediaTypes(accept);
  return {
    json: firstJsonType(asked),
    stream: asked.some((type) => STREAM_TYPES.some((offered) => covers(type, offered))),
    refuses: accept !== undefined && refusesSome(accept),
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
  const { refuses, json } = reading(accept);
  return refuses ? undefined : json;
}

/** Whether the client accepts a JSON type (Yoga's regular answer) at all. */
export function acceptsJson(accept: string | null | undefined): boolean {
  return reading(accept ?? undefined).json !== undefined;
}

/** An entry with quality zero: `;q=0`, `;q=0.0`, `; Q=0.000`. */
const REFUSED_ENTRY = /;\s*q\s*=\s*0(?:\.0{0,3})?\s*(?:;|$)/i;

function refusesSome(accept: string): boolean {
  return accept.split(',').some((entry) => REFUSED_ENTRY.test(entry));
}

/** The media types Yoga answers GraphQL with, for a 406's `Accept`. */
const ANSWERED_TYPES =
  'application/graphql-response+json; charset=utf-8, application/json; charset=utf-8, text/event-stream; charset=utf-8';

/** Removes refused entries (`q=0`) from `Accept` before Yoga reads it; 406 when nothing is left. */
export function acceptQualityPlugin(): Plugin {
  return {
    onRequest({ request, endResponse, fetchAPI }) {
      const accept = request.headers.get('accept');
      if (accept === null || !refusesSome(accept)) return;
      const kept = accept.split(',').filter((entry) => !REFUSED_ENTRY.test(entry));
      if (kept.length === 0) {
        endResponse(new fetchAPI.Response(null, { status: 406, headers: { Accept: ANSWERED_TYPES } }));
        return;
      }
      request.headers.set('accept', kept.join(','));
    },
  };
}

/** Whether the client accepts a streamed answer (server-sent events or multipart). */
export function mayStream(accept: string | undefined): boolean {
  return reading(accept).stream;
}
