/**
 * Headers that every answer to a request carries and that are known before the answer is (its
 * request id, `nosniff`, the CORS pair). The answer's own `writeHead` writes them.
 *
 * Why not `res.setHeader`: node:http writes the headers given to `writeHead` straight into the
 * response head only when no header was set before. One earlier `setHeader` sends every header of
 * the answer through `setHeader` again (each validated, its name lower-cased, kept in a map, then
 * written from it). The service's HTTP server (./server.ts) makes its responses ServiceResponses,
 * so the early headers wait on the response and join the answer's headers in one object (see
 * docs/decisions.md, "Headers known early, written with the answer's").
 *
 * A response of another server (a test's own, a benchmark's fake) gets them by `setHeader` as
 * before; the answers are the same either way.
 */
import { type IncomingMessage, type OutgoingHttpHeader, type OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { sameHeaderName } from './respond.js';

/** The response class of the service's HTTP server. */
export class ServiceResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
  /** The early headers in the order they were given: name, value, name, value… */
  readonly earlyHeaders: string[] = [];

  override writeHead(
    statusCode: number,
    reasonOrHeaders?: string | OutgoingHttpHeaders | OutgoingHttpHeader[],
    headers?: OutgoingHttpHeaders | OutgoingHttpHeader[],
  ): this {
    const early = this.earlyHeaders;
    const reason = typeof reasonOrHeaders === 'string' ? reasonOrHeaders : undefined;
    const given = typeof reasonOrHeaders === 'string' ? headers : reasonOrHeaders;
    if (early.length === 0) return super.writeHead(statusCode, reason, given);
    // Headers set with setHeader (Yoga's own handler does) or given as a list: node merges them
    // itself, so the early ones join as setHeader would have had them, the answer's winning.
    if (Array.isArray(given) || this.getHeaderNames().length > 0) {
      for (let i = 0; i < early.length; i += 2) {
        const name = early[i] as string;
        if (!this.hasHeader(name)) super.setHeader(name, early[i + 1] as string);
      }
      return super.writeHead(statusCode, reason, given);
    }
    return super.writeHead(statusCode, reason, withEarlyHeaders(early, given));
  }
}

/**
 * The early headers first, then the answer's: an answer's header of the same name (in any case)
 * replaces the early one, as `setHeader` before `writeHead` did.
 */
function withEarlyHeaders(early: readonly string[], given: OutgoingHttpHeaders | undefined): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (let i = 0; i < early.length; i += 2) out[early[i] as string] = early[i + 1];
  if (given === undefined) return out;
  for (const name in given) {
    const replaced = earlyNameLike(early, name);
    if (replaced !== undefined && replaced !== name) delete out[replaced];
    out[name] = given[name];
  }
  return out;
}

/** The early header's name that `name` equals in any case. */
function earlyNameLike(early: readonly string[], name: string): string | undefined {
  for (let i = 0; i < early.length; i += 2) {
    const earlyName = early[i] as string;
    if (sameHeaderName(earlyName, name)) return earlyName;
  }
  return undefined;
}

/** Gives a header every answer to this request carries, before the answer is known. */
export function setEarlyHeader(res: ServerResponse, name: string, value: string): void {
  if (res instanceof ServiceResponse && !res.headersSent) res.earlyHeaders.push(name, value);
  else res.setHeader(name, value);
}

/** An early header given with `name` (in its case as given), or a header set under it. */
export function earlyHeaderOf(res: ServerResponse, name: string): string | undefined {
  if (res instanceof ServiceResponse) {
    const early = res.earlyHeaders;
    for (let i = 0; i < early.length; i += 2) if (early[i] === name) return early[i + 1];
  }
  const set = res.getHeader(name);
  return typeof set === 'string' ? set : undefined;
}
