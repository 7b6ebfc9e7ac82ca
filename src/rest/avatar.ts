/**
 * `GET /api/{name_id}/avatar?size=&fallback=&format=&v=`: the avatar service's answer as HTTP. An
 * image, redirect or SVG asked for with the current version (`v=`, what `avatarUrl` writes) may
 * be cached for good; otherwise it gets the profile `Cache-Control`. The fallback of an original
 * that failed gets a short `max-age` (at most the profile's), never `immutable`. Images and SVGs
 * have an ETag and 304s: conditional requests do not apply to redirects (RFC 9110 §13.2.1).
 * Every answer varies with `Accept` (the image's format follows it), so shared caches keep one
 * copy per `Accept`.
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { Variant } from '../avatars/variant-store.js';
import { matchesIfNoneMatch } from '../http/conditional.js';
import { sendBody, sendError, sendNotModified } from '../http/respond.js';
import {
  AVATAR_FORMATS,
  AVATAR_SIZE,
  type AvatarAnswer,
  type AvatarParameters,
  FAILED_ORIGINAL_MAX_AGE_SECONDS,
  IMAGE_CONTENT_TYPES,
  INVALID_SIZE_MESSAGE,
  MAX_FALLBACK_URL_LENGTH,
} from '../service/avatars.js';
import { sendValidated } from './etag-answer.js';
import {
  EVERY,
  errorAnswer,
  headers as headerRefs,
  LOOKUP_ERRORS,
  MISSING_CACHING,
  NAME_ID_PARAMETER,
  notModified,
  type Operation,
  RATE_LIMIT,
  VALIDATOR,
} from './openapi-components.js';
import { rateLimitHeaders } from './rate-limit-headers.js';
import { GET_HEAD, type RestRoute } from './route.js';
import { serviceHandler } from './service-handler.js';

const IMMUTABLE_CACHE_CONTROL = 'public, max-age=31536000, immutable';
const SVG_CONTENT_TYPE = 'image/svg+xml';

/** The avatar's own `Cache-Control`s, besides the profile's. */
interface AvatarCacheControls {
  /** A failed original's fallback: the failure memory's length at most, and the profile's. */
  temporary: string;
  /** The current version's URL (`v=`). */
  immutable: string;
}

/** Whatever a browser makes of the SVG (or an image), it runs nothing and loads nothing (inline styles only). */
const SVG_SECURITY_HEADERS: OutgoingHttpHeaders = {
  'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'",
  'X-Content-Type-Options': 'nosniff',
};

export const avatarRoute: RestRoute = {
  pattern: '/api/:name/avatar',
  methods: GET_HEAD,
  handler: (deps) => {
    const temporary = `public, max-age=${Math.min(deps.config.cacheMaxAgeSeconds, FAILED_ORIGINAL_MAX_AGE_SECONDS)}`;
    const controls: AvatarCacheControls = { temporary, immutable: IMMUTABLE_CACHE_CONTROL };
    // An answer to a request with an API key carries the key's budget: for its client alone.
    const keyedControls: AvatarCacheControls = {
      temporary: deps.edge.keyed(temporary),
      immutable: deps.edge.keyed(IMMUTABLE_CACHE_CONTROL),
    };
    return serviceHandler(deps, async ({ req, res, params, request }) => {
      const { value, rateLimit } = await deps.avatars.lookupAvatar(request, params.name ?? '', {
        parameters: avatarParameters(req.url ?? ''),
        accept: req.headers.accept,
      });
      send(
        req,
        res,
        value,
        { ...rateLimitHeaders(rateLimit), Vary: 'Accept' },
        (found) => deps.edge.headers(request, found),
        request.apiKey === undefined ? controls : keyedControls,
      );
    });
  },
  openApi: { pathParameters: { name: NAME_ID_PARAMETER }, get: avatarOperation() },
};

/**
 * Avatar URLs come back again and again with the same query (`size=64&v=…`): the parameters of a
 * query string are kept (a bounded number of them, short query strings only), and the service
 * keeps its check of them with the same object.
 */
const parametersOfQuery = new Map<string, AvatarParameters>();
const MAX_REMEMBERED_QUERIES = 1024;
const MAX_REMEMBERED_QUERY_LENGTH = 256;

function avatarParameters(url: string): AvatarParameters {
  const at = url.indexOf('?');
  const search = at < 0 ? '' : url.slice(at + 1);
  let parameters = parametersOfQuery.get(search);
  if (parameters === undefined) {
    const query = new URLSearchParams(search);
    parameters = {
      size: query.getAll('size'),
      fallback: query.getAll('fallback'),
      format: query.getAll('format'),
      version: query.getAll('v'),
    };
    if (search.length <= MAX_REMEMBERED_QUERY_LENGTH) {
      if (parametersOfQuery.size >= MAX_REMEMBERED_QUERIES) parametersOfQuery.clear();
      parametersOfQuery.set(search, parameters);
    }
  }
  return parameters;
}

/**
 * The headers of a variant's 200 that do not change from one request to the next, made once per
 * variant: its validator, type, length and the security headers (`X-Content-Type-Options` is on
 * every answer already, src/http/request-handler.ts).
 */
const variantHeaders = new WeakMap<Variant, OutgoingHttpHeaders>();

function headersOfVariant(variant: Variant): OutgoingHttpHeaders {
  let headers = variantHeaders.get(variant);
  if (headers === undefined) {
    headers = {
      ETag: variant.etag,
      'Content-Security-Policy': SVG_SECURITY_HEADERS['Content-Security-Policy'],
      'Content-Type': IMAGE_CONTENT_TYPES[variant.format],
      'Content-Length': variant.body.length,
    };
    variantHeaders.set(variant, headers);
  }
  return headers;
}

function send(
  req: IncomingMessage,
  res: ServerResponse,
  answer: AvatarAnswer,
  headers: OutgoingHttpHeaders,
  cacheHeaders: (found: boolean) => OutgoingHttpHeaders,
  controls: AvatarCacheControls,
): void {
  if (answer.kind === 'missing') {
    const busy = answer.busy === true ? { 'Cache-Control': 'no-store' } : {};
    sendError(req, res, 404, answer.message, { ...headers, ...cacheHeaders(false), ...busy });
    return;
  }
  // A versioned URL names one version for good: no purge is needed, its tags go with it all the same.
  // A fallback for a failed original is kept briefly everywhere: the failure may be temporary.
  // One for a busy moment is kept nowhere: the next request may well get the image.
  const shared = cacheHeaders(true);
  const caching =
    answer.busy === true
      ? { ...shared, 'Cache-Control': 'no-store' }
      : answer.temporary === true
        ? { ...shared, 'Cache-Control': controls.temporary }
        : answer.currentVersion
          ? { ...shared, 'Cache-Control': controls.immutable }
          : shared;
  if (answer.kind === 'redirect') {
    sendBody(req, res, 302, '', { ...headers, ...caching, Location: answer.location });
    return;
  }
  if (answer.kind === 'image') {
    // An image is compressed already: one body and one ETag, whatever the client's coding.
    const { variant } = answer;
    if (matchesIfNoneMatch(req, variant.etag)) {
      sendNotModified(res, { ...headers, ...caching, ETag: variant.etag });
      return;
    }
    // The same security headers as the SVG's: an image opened directly needs nothing else either.
    res.writeHead(200, { ...headers, ...caching, ...headersOfVariant(variant) });
    res.end(req.method === 'HEAD' ? undefined : variant.body);
    return;
  }
  sendValidated(req, res, {
    etag: answer.etag,
    validators: { ...headers, ...caching, ETag: answer.etag },
    body: answer.svg,
    contentHeaders: { ...SVG_SECURITY_HEADERS, 'Content-Type': SVG_CONTENT_TYPE },
  });
}

function avatarOperation(): Operation {
  const caching = {
    'Cache-Control': {
      $ref: '#/components/headers/Cache-Control',
      description:
        '`public, max-age=31536000, immutable` when `v` is the current avatar version, else the profile `Cache-Control`; ' +
        'a fallback answered because the original could not be used: `public, max-age=<at most 60, at most the profile max-age>`; ' +
        'because the service was busy making new variants (`AVATAR_RESIZES_PER_SECOND`, origin fetch slots): `no-store`. ' +
        'To a request with an API key each of these with `private` for `public` and no `s-maxage` (e.g. `private, max-age=31536000, immutable`).',
    },
    ...headerRefs('Vary', 'xkey', 'Surrogate-Key'),
  };
  const binary = { type: 'string', contentMediaType: 'application/octet-stream' };
  const imageContent = Object.fromEntries(
    AVATAR_FORMATS.map((format) => [IMAGE_CONTENT_TYPES[format], { schema: binary }]),
  );
  return {
    operationId: 'avatar',
    summary: 'The avatar of a name ID, as an image of the size asked for, with a fallback',
    description:
      'The profile `image`, when it is an http(s) URL: fetched by the service from public addresses only, scaled ' +
      'to cover a `size`×`size` square (centred), without the metadata of the original, as WebP when `Accept` names ' +
      '`image/webp`, else PNG (transparent images) or JPEG, or in the format `format` names. With `AVATAR_PROXY=off`, ' +
      'a redirect to the `image` instead. Otherwise, and when the original cannot be used (refused address, error, ' +
      'timeout, too large, not an image), or when the service is busy making new variants, the `fallback`: a ' +
      'generated SVG with the initial, a 404, or a redirect to a URL of the client. Every answer varies with ' +
      '`Accept`. One point of the profile budget.',
    tags: ['Avatars'],
    parameters: [
      {
        name: 'size',
        in: 'query',
        description: 'Width and height of the answer, in pixels.',
        schema: { type: 'integer', minimum: AVATAR_SIZE.min, maximum: AVATAR_SIZE.max, default: AVATAR_SIZE.default },
      },
      {
        name: 'fallback',
        in: 'query',
        description:
          '`initials`, `404`, or an https URL to redirect to when there is no usable http(s) image (a URI once ' +
          'serialised: characters such as `\\`, `{`, `|` percent-encoded).',
        schema: {
          anyOf: [
            { type: 'string', enum: ['initials', '404'] },
            { type: 'string', format: 'uri', pattern: '^https://', maxLength: MAX_FALLBACK_URL_LENGTH },
          ],
          default: 'initials',
        },
      },
      {
        name: 'format',
        in: 'query',
        description: 'The image format of the answer, whatever `Accept` says; the fallback SVG is not affected.',
        schema: { type: 'string', enum: [...AVATAR_FORMATS] },
      },
      {
        name: 'v',
        in: 'query',
        description:
          'The avatar version, as GraphQL `Profile.avatarUrl` writes it; makes the answer cacheable for good.',
        schema: { type: 'string' },
      },
    ],
    responses: {
      '200': {
        description:
          'The image, or the generated SVG (safe to open directly: no script, a strict Content-Security-Policy).',
        headers: {
          ...EVERY,
          ...VALIDATOR,
          ...caching,
          ...RATE_LIMIT,
          ...headerRefs('Vary', 'Content-Security-Policy', 'X-Content-Type-Options'),
        },
        content: { ...imageContent, 'image/svg+xml': { schema: { type: 'string' } } },
      },
      '302': {
        description: 'To the stored image (`AVATAR_PROXY=off`), or to the fallback URL.',
        headers: { ...EVERY, ...headerRefs('Location', 'Vary'), ...caching, ...RATE_LIMIT },
      },
      '304': notModified(headerRefs('Vary')),
      '400': errorAnswer(
        'An invalid name ID, size, fallback or format (checked in that order).',
        INVALID_SIZE_MESSAGE,
        RATE_LIMIT,
      ),
      '404': errorAnswer(
        '`fallback=404` and no profile (`Profile not found`) or no usable http(s) image (`No avatar`).',
        'No avatar',
        { ...RATE_LIMIT, ...MISSING_CACHING, ...headerRefs('Vary') },
      ),
      ...LOOKUP_ERRORS,
    },
  };
}
