/**
 * A stream that cannot start is an error answer, not a stream. Yoga answers a client that only
 * accepts `text/event-stream` with a 200 stream even when the operation failed before producing
 * anything (invalid names, too many open subscriptions, a document that does not validate): one
 * `next` event with the errors, then `complete`. The graphql-sse protocol ("distinct connections")
 * wants such requests refused with a 4xx and the errors as JSON, which its client reports as an
 * error; REST's events stream answers 400 and 429 the same way.
 *
 * So a result without `data` (a request error: nothing executed) for a client whose `Accept`
 * admits a stream and no JSON type is answered as JSON with 429 when a budget or slot was refused
 * (and `Retry-After`), else 400. Results with data and streams are left to Yoga. (The client's
 * header decides, not `acceptableMediaTypes`: that is the list of types Yoga's processors offer,
 * JSON always among them for a single result.)
 */
import type { ExecutionResult } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import { ERROR_CODES } from '../execution/error-masking.js';
import { acceptsJson, mayStream } from './accept.js';

function statusOf(result: ExecutionResult): { status: number; retryAfter?: number } {
  const limited = result.errors?.find((error) => error.extensions?.code === ERROR_CODES.rateLimited);
  if (limited === undefined) return { status: 400 };
  const retryAfter = limited.extensions?.retryAfter;
  return { status: 429, retryAfter: typeof retryAfter === 'number' ? retryAfter : 1 };
}

export function refusedStreamsPlugin(): Plugin {
  return {
    onResultProcess({ request, result, setResultProcessor }) {
      if (isAsyncIterable(result) || Array.isArray(result)) return;
      if (result.data !== undefined || (result.errors?.length ?? 0) === 0) return;
      const accept = request.headers.get('accept');
      if (!mayStream(accept ?? undefined) || acceptsJson(accept)) return;
      const { status, retryAfter } = statusOf(result);
      setResultProcessor(
        (_result, fetchAPI) =>
          new fetchAPI.Response(JSON.stringify({ errors: result.errors }), {
            status,
            headers: {
              'Content-Type': 'application/json; charset=utf-8',
              ...(retryAfter === undefined ? {} : { 'Retry-After': String(retryAfter) }),
            },
          }),
        'application/json',
      );
    },
  };
}
