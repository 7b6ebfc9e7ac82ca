/**
 * Webhook requests through the outbound guard (src/outbound/checked-target.ts), the same guard
 * as avatar originals with the endpoints' own allow list (WEBHOOK_PRIVATE_ORIGINS): https to public
 * addresses, http only to the networks that list allows; no credentials in the URL; every address
 * the host resolves to checked, at creation and at every attempt, and the connection pinned to it.
 * Redirects are never followed (a 3xx is a failed delivery). The answer's body is read up to a few
 * kilobytes and dropped. The whole request, connection included, ends at WEBHOOK_TIMEOUT_MS.
 */
import http from 'node:http';
import https from 'node:https';
import type { AddressPolicy } from '../outbound/address-policy.js';
import {
  type CheckedAddress,
  checkedAddress,
  checkedUrl,
  OutboundError,
  pinnedLookup,
  type Resolver,
  timeoutOrAbort,
} from '../outbound/checked-target.js';
import type { PostDelivery, PostResult } from './dispatcher.js';

const SCHEMES = ['https:', 'http:'];
/** Bytes of an answer's body read before the connection is dropped: receivers answer little. */
const MAX_ANSWER_BYTES = 64 * 1024;

export interface WebhookTarget {
  policy: AddressPolicy;
  /** Host name resolution (tests replace it). */
  resolve?: Resolver;
}

/** The address a webhook request connects to, or an OutboundError saying why it may not. */
async function webhookAddress(url: URL, target: WebhookTarget, signal: AbortSignal): Promise<CheckedAddress> {
  const address = await checkedAddress(url, target.policy, signal, target.resolve);
  if (url.protocol === 'http:' && !target.policy.listed(address.address)) {
    throw new OutboundError('refused-url', 'http is allowed only to networks WEBHOOK_PRIVATE_ORIGINS lists; use https');
  }
  return address;
}

/**
 * Why a webhook URL may not be used, in one sentence for the client; undefined when it may. The
 * host is resolved: a name that has no address, or one the guard refuses, is refused.
 */
export async function refusedWebhookUrl(url: string, target: WebhookTarget): Promise<string | undefined> {
  try {
    const parsed = checkedUrl(url, SCHEMES);
    await webhookAddress(parsed, target, AbortSignal.timeout(5000));
    return undefined;
  } catch (error) {
    if (!(error instanceof OutboundError)) throw error;
    return `The url is refused: ${error.message}`;
  }
}

/** A few words for the deliveries log: what became of a request that got no answer. */
function errorWords(error: unknown): string {
  if (error instanceof OutboundError) {
    if (error.failure === 'timeout') return 'timeout';
    if (error.failure === 'refused-address' || error.failure === 'refused-url') return error.message;
    const code = (error.cause as { code?: unknown } | undefined)?.code;
    if (code === 'ECONNREFUSED') return 'connection refused';
    if (code === 'ECONNRESET' || code === 'EPIPE') return 'connection reset';
    return error.message;
  }
  return error instanceof Error ? error.message : String(error);
}

/** POSTs a signed delivery; never throws: a failure is a result with `status: null`. */
export function webhookPoster(target: WebhookTarget, timeoutMs: number): PostDelivery {
  return async (url, headers, body, signal) => {
    const deadline = AbortSignal.timeout(timeoutMs);
    const combined = AbortSignal.any([deadline, signal]);
    try {
      const parsed = checkedUrl(url, SCHEMES);
      const address = await webhookAddress(parsed, target, combined);
      return await post(parsed, address, headers, body, combined, deadline);
    } catch (error) {
      return { status: null, error: errorWords(error) };
    }
  };
}

function post(
  url: URL,
  address: CheckedAddress,
  headers: Record<string, string>,
  body: string,
  signal: AbortSignal,
  deadline: AbortSignal,
): Promise<PostResult> {
  const client = url.protocol === 'https:' ? https : http;
  const payload = Buffer.from(body);
  return new Promise<PostResult>((resolve, reject) => {
    const req = client.request(url, {
      method: 'POST',
      agent: false,
      lookup: pinnedLookup(address),
      signal,
      headers: {
        ...headers,
        'content-length': String(payload.length),
        'user-agent': 'name-profile-service webhooks',
      },
    });
    const failed = (error: Error) =>
      signal.aborted
        ? timeoutOrAbort(deadline.aborted ? deadline : signal)
        : new OutboundError('network-error', `${url.host}: ${error.message}`, { cause: error });
    req.once('error', (error) => reject(failed(error)));
    req.once('response', (res) => {
      const status = res.statusCode ?? 0;
      const retryAfter = typeof res.headers['retry-after'] === 'string' ? res.headers['retry-after'] : undefined;
      let read = 0;
      const settle = () => {
        const redirect = status >= 300 && status < 400;
        const error =
          status >= 200 && status < 300 ? null : redirect ? `redirect (${status}) not followed` : `answered ${status}`;
        resolve({ status, error, ...(retryAfter === undefined ? {} : { retryAfter }) });
      };
      res.on('data', (chunk: Buffer) => {
        read += chunk.length;
        // Enough of an answer nobody reads: the status is what counts.
        if (read > MAX_ANSWER_BYTES) {
          res.destroy();
          settle();
        }
      });
      res.once('end', settle);
      res.once('error', (error) => reject(failed(error)));
    });
    req.end(payload);
  });
}
