/** `GET /api/{name_id}/vcard`: the vCard service's answer as HTTP, a download with ETag/304. */

import { sendFoundDocument } from './etag-answer.js';
import { CACHEABLE, FOUND_DOCUMENT_ANSWERS, headers as headerRefs, NAME_ID_PARAMETER } from './openapi-components.js';
import { GET_HEAD, type RestRoute } from './route.js';
import { serviceHandler } from './service-handler.js';

const VCARD_CONTENT_TYPE = 'text/vcard; charset=utf-8';

export const vcardRoute: RestRoute = {
  pattern: '/api/:name/vcard',
  methods: GET_HEAD,
  handler: (deps) =>
    serviceHandler(deps, async ({ req, res, params, request }) => {
      const { value: card, rateLimit } = await deps.vcards.lookupVCard(request, params.name ?? '');
      const document = card && {
        etag: card.etag,
        body: card.text,
        contentHeaders: { 'Content-Type': VCARD_CONTENT_TYPE, 'Content-Disposition': attachment(card.filename) },
      };
      sendFoundDocument(req, res, document, {
        rateLimit,
        cacheHeaders: (found) => deps.edge.headers(request, found),
      });
    }),
  openApi: {
    pathParameters: { name: NAME_ID_PARAMETER },
    get: {
      operationId: 'vcard',
      summary: 'The profile as a vCard 4.0 (RFC 6350)',
      description: 'A download for address books. One point of the profile budget.',
      tags: ['Profiles'],
      responses: {
        '200': {
          description: 'The vCard.',
          headers: { ...CACHEABLE, ...headerRefs('Content-Disposition') },
          content: { 'text/vcard': { schema: { type: 'string' } } },
        },
        ...FOUND_DOCUMENT_ANSWERS,
      },
    },
  },
};

/**
 * `attachment; filename="…"`, plus RFC 6266's `filename*` (RFC 8187 UTF-8, percent-encoded) when
 * the name is not ASCII; the plain `filename` then holds an ASCII stand-in for old clients
 * (accents dropped, other letters as `_`). Valid names hold no quote or backslash.
 */
function attachment(filename: string): string {
  if (/^[\x20-\x7e]*$/.test(filename)) return `attachment; filename="${filename}"`;
  const ascii = filename
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .replace(/[^\x20-\x7e]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}
