/** `GET /api/{name_id}/vcard`: the vCard service's answer as HTTP, a download with ETag/304. */
import { matchesIfNoneMatch } from '../http/conditional.js';
import { sendBody, sendError, sendNotModified } from '../http/respond.js';
import { rateLimitHeaders } from './rate-limit-headers.js';
import { GET_HEAD, type RestRoute } from './route.js';
import { serviceHandler } from './service-handler.js';

export const VCARD_CONTENT_TYPE = 'text/vcard; charset=utf-8';

export const vcardRoute: RestRoute = {
  pattern: '/api/:name/vcard',
  methods: GET_HEAD,
  handler: (deps) =>
    serviceHandler(deps, async ({ req, res, params, request }) => {
      const { value: card, rateLimit } = await deps.vcards.lookupVCard(request, params.name ?? '');
      const headers = rateLimitHeaders(rateLimit);
      if (card === null) {
        sendError(req, res, 404, 'Profile not found', headers);
        return;
      }
      const validators = { ...headers, ETag: card.etag, 'Cache-Control': deps.config.profileCacheControl };
      if (matchesIfNoneMatch(req, card.etag)) {
        sendNotModified(res, validators);
        return;
      }
      sendBody(req, res, 200, card.text, {
        ...validators,
        'Content-Type': VCARD_CONTENT_TYPE,
        'Content-Disposition': attachment(card.filename),
      });
    }),
};

/**
 * `attachment; filename="…"`, plus RFC 6266's `filename*` (RFC 8187 UTF-8, percent-encoded) when
 * the name is not ASCII; the plain `filename` then holds an ASCII stand-in for old clients
 * (accents dropped, other letters as `_`). Valid names hold no quote or backslash.
 */
export function attachment(filename: string): string {
  if (/^[\x20-\x7e]*$/.test(filename)) return `attachment; filename="${filename}"`;
  const ascii = filename
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .replace(/[^\x20-\x7e]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}
