/** Query parameters of REST requests. */
import type { IncomingMessage } from 'node:http';

/** The decoded query parameters of a request (`+` reads as a space, as in HTML forms). */
export function queryOf(req: IncomingMessage): URLSearchParams {
  const url = req.url ?? '';
  const at = url.indexOf('?');
  return new URLSearchParams(at < 0 ? '' : url.slice(at + 1));
}

/**
 * A parameter's value, or null when it is absent. A repeated parameter is invalid: its values are
 * joined with a comma, which no valid e-mail or name ID contains, so the service rejects it with
 * the same message as any other invalid value. (Not for values that may contain a comma, a URL.)
 */
export function singleParameter(query: URLSearchParams, name: string): string | null {
  const values = query.getAll(name);
  return values.length === 0 ? null : values.join(',');
}
