/**
 * Streamed GraphQL answers (server-sent events, multipart) get the same connection handling as
 * every other answer. Yoga writes `Connection: keep-alive` on them, which overrides a client's
 * `Connection: close` (and the server's own close while draining), and `Content-Encoding: none`,
 * which is no content coding at all (RFC 9110 §8.4.1). Without the two, Node decides about the
 * connection as it does for any response, and the body is what it says it is.
 */
import type { Plugin } from 'graphql-yoga';

export function streamingHeadersPlugin(): Plugin {
  return {
    onResponse({ response }) {
      const type = response.headers.get('content-type') ?? '';
      if (!type.startsWith('text/event-stream') && !type.startsWith('multipart/mixed')) return;
      response.headers.delete('connection');
      if (response.headers.get('content-encoding') === 'none') response.headers.delete('content-encoding');
    },
  };
}
