/**
 * What the OpenAPI descriptions of the REST routes share: the few OpenAPI 3.1 types they are
 * written in, the schemas and headers under `components`, and the answers many paths give
 * (errors, 304). Each route module describes its own path with these; openapi.ts assembles the
 * document.
 *
 * Every answer carries X-Request-Id and, on these paths, `Access-Control-Allow-Origin: *`.
 */
import { INVALID_NAME_MESSAGE } from '../names/name-id.js';
import { MAX_CHANGES_PAGE } from '../service/changes.js';
import { INVALID_CURSOR_MESSAGE } from '../service/cursors.js';
import { MAX_PAGE_SIZE } from '../service/discovery.js';
import { MAX_NAMES_PER_REQUEST } from '../service/profiles-service.js';
import {
  EVENT_TYPES,
  MAX_DESCRIPTION_LENGTH,
  MAX_WEBHOOK_NAMES,
  MAX_WEBHOOK_NAMESPACES,
  MAX_WEBHOOK_URL_LENGTH,
  MAX_WEBHOOKS_PER_KEY,
} from '../service/webhooks.js';

/** A JSON Schema (2020-12, the dialect of OpenAPI 3.1); the tests compile it with Ajv. */
export type Schema = Readonly<Record<string, unknown>>;

export interface Reference {
  readonly $ref: string;
  /** Overrides the description of what is referenced (OpenAPI 3.1). */
  readonly description?: string;
}

export interface Header {
  readonly schema: Schema;
  readonly description: string;
  readonly required?: boolean;
}

export type Headers = Readonly<Record<string, Reference>>;

export interface MediaType {
  readonly schema: Schema | Reference;
  readonly example?: unknown;
}

export interface Response {
  readonly description: string;
  readonly headers?: Headers;
  readonly content?: Readonly<Record<string, MediaType>>;
}

export type Responses = Readonly<Record<string, Response>>;

export interface Parameter {
  readonly name: string;
  readonly in: 'path' | 'query' | 'header';
  readonly required?: boolean;
  readonly description: string;
  readonly style?: 'form';
  readonly explode?: boolean;
  readonly schema: Schema;
  readonly example?: unknown;
}

export interface Operation {
  readonly operationId: string;
  readonly summary: string;
  readonly description?: string;
  readonly tags?: readonly string[];
  readonly parameters?: readonly Parameter[];
  /** Overrides the document's (where a key is optional): e.g. a key required. */
  readonly security?: ReadonlyArray<Readonly<Record<string, readonly string[]>>>;
  readonly requestBody?: {
    readonly required: boolean;
    readonly description: string;
    readonly content: Readonly<Record<string, MediaType>>;
  };
  readonly responses: Responses;
}

const header = (name: string): Reference => ({ $ref: `#/components/headers/${name}` });
export const headers = (...names: string[]): Headers => Object.fromEntries(names.map((name) => [name, header(name)]));

/** On every answer of these paths. */
export const EVERY = headers('X-Request-Id', 'Access-Control-Allow-Origin', 'X-Content-Type-Options');
export const RATE_LIMIT = headers('RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset');
const RETRY_AFTER = headers('Retry-After');
/** Shared caches: the coding variants, and the cache tags sent while CACHE_PURGE_URLS is set. */
const EDGE = headers('Vary', 'xkey', 'Surrogate-Key');
export const CACHING = { ...headers('Cache-Control'), ...EDGE };
/** A 404 of a name: shared caches may keep it while they are purged (CACHE_PURGE_URLS). */
export const MISSING_CACHING: Headers = {
  'Cache-Control': { $ref: '#/components/headers/Cache-Control-Missing' },
  ...headers('xkey', 'Surrogate-Key'),
};
export const VALIDATOR = headers('ETag');

export const schemaRef = (name: string): Reference => ({ $ref: `#/components/schemas/${name}` });

export const jsonContent = (schema: string, example?: unknown): Record<string, MediaType> => ({
  'application/json': { schema: schemaRef(schema), ...(example === undefined ? {} : { example }) },
});

export const errorAnswer = (description: string, example: string, extra: Headers = {}): Response => ({
  description,
  headers: { ...EVERY, ...extra },
  content: jsonContent('Error', { error: example }),
});

/** The 405 the router gives every method a path does not serve; `allow` names those it does. */
export const methodNotAllowed = (allow: string): Response => ({
  description: `Another method than ${allow} on this path; \`Allow\` lists those.`,
  headers: { ...EVERY, ...headers('Allow') },
  content: jsonContent('Error', { error: 'Method not allowed' }),
});

export const internalError = (extra: Headers = {}): Response =>
  errorAnswer('Something unexpected failed; the details are only in the server log.', 'Internal server error', extra);

export const tooManyRequests = (extra: Headers = {}): Response =>
  errorAnswer('The client used up its budget.', 'Too many requests, retry in 42 seconds', {
    ...RATE_LIMIT,
    ...RETRY_AFTER,
    ...extra,
  });

export const unavailable = (extra: Headers = {}): Response =>
  errorAnswer('The database cannot be reached or is too slow; retry later.', 'Service unavailable', {
    ...RATE_LIMIT,
    ...RETRY_AFTER,
    ...extra,
  });

export const notModified = (extra: Headers = {}): Response => ({
  description: 'Not modified: `If-None-Match` matched the current ETag. No body.',
  headers: { ...EVERY, ...VALIDATOR, ...CACHING, ...RATE_LIMIT, ...extra },
});

/** The answers every profile-budgeted lookup shares (and the 405 every path gets). */
export const LOOKUP_ERRORS: Responses = {
  '429': tooManyRequests(),
  '500': internalError(),
  '503': unavailable(),
};

export const INVALID_NAME_ID = errorAnswer('An invalid name ID.', INVALID_NAME_MESSAGE, RATE_LIMIT);
export const PROFILE_NOT_FOUND = errorAnswer('A valid name ID without a profile.', 'Profile not found', {
  ...RATE_LIMIT,
  ...MISSING_CACHING,
});

/** The headers of a 200 that may be cached and revalidated. */
export const CACHEABLE = { ...EVERY, ...VALIDATOR, ...CACHING, ...RATE_LIMIT };

/** What a lookup of one name's document answers besides its 200 (see sendFoundDocument). */
export const FOUND_DOCUMENT_ANSWERS: Responses = {
  '304': notModified(),
  '400': INVALID_NAME_ID,
  '404': PROFILE_NOT_FOUND,
  ...LOOKUP_ERRORS,
};

export const NAME_ID_PARAMETER: Parameter = {
  name: 'name_id',
  in: 'path',
  required: true,
  description: 'A name ID `<local>@<domain>`, case-insensitive, optionally percent-encoded (decoded once).',
  schema: { type: 'string', maxLength: 1024 },
  example: 'demo@me',
};

const EVENT_TYPE = { type: 'string', enum: [...EVENT_TYPES] };

/** A webhook endpoint as its owner sees it; `withSecret`: just made or rotated, with its secret. */
function webhookSchema(withSecret: boolean): Schema {
  const required = ['id', 'url', 'names', 'namespaces', 'events', 'description', 'status', 'disabledReason'];
  return {
    type: 'object',
    required: [...required, ...(withSecret ? ['secret'] : []), 'createdAt'],
    additionalProperties: false,
    properties: {
      id: { type: 'string', pattern: '^wh_[0-9A-Za-z]{24}$' },
      url: { type: 'string', maxLength: MAX_WEBHOOK_URL_LENGTH, description: 'As it was given.' },
      names: {
        type: 'array',
        items: { type: 'string' },
        maxItems: MAX_WEBHOOK_NAMES,
        description: 'Canonical name IDs whose changes it gets, sorted. Empty with `namespaces` empty: every change.',
      },
      namespaces: {
        type: 'array',
        items: { type: 'string' },
        maxItems: MAX_WEBHOOK_NAMESPACES,
        description: 'Namespaces whose names it gets (besides `names`), sorted.',
      },
      events: { type: 'array', items: EVENT_TYPE, minItems: 1, maxItems: EVENT_TYPES.length, uniqueItems: true },
      description: { type: ['string', 'null'], maxLength: MAX_DESCRIPTION_LENGTH },
      status: {
        type: 'string',
        enum: ['active', 'disabled'],
        description: 'Nothing is delivered to a disabled endpoint until it is enabled again.',
      },
      disabledReason: {
        type: ['string', 'null'],
        description:
          'Why it was disabled (a 410 from it, its deliveries failing too long, an operator); null while active.',
      },
      ...(withSecret
        ? {
            secret: {
              type: 'string',
              pattern: '^whsec_[A-Za-z0-9+/]{43}=$',
              description:
                'The signing secret: `whsec_` and the base64 of 32 random bytes, as Standard Webhooks libraries take ' +
                'it. Shown only now.',
            },
          }
        : {}),
      createdAt: { type: 'string', format: 'date-time', description: 'UTC.' },
    },
  };
}

const PAGE_NAMES = {
  type: 'array',
  items: { type: 'string', description: 'A canonical name ID.' },
  maxItems: MAX_PAGE_SIZE,
};
const NEXT_CURSOR = {
  type: ['string', 'null'],
  description: `Pass it as \`cursor\` for the next page; null on the last page. Opaque; a cursor of another query is refused (400 "${INVALID_CURSOR_MESSAGE}").`,
};

export const SCHEMAS: Readonly<Record<string, Schema>> = {
  NamePage: {
    type: 'object',
    required: ['names', 'nextCursor'],
    additionalProperties: false,
    properties: { names: PAGE_NAMES, nextCursor: NEXT_CURSOR },
  },
  WalletPage: {
    type: 'object',
    required: ['address', 'names', 'nextCursor'],
    additionalProperties: false,
    properties: {
      address: { type: 'string', description: 'The address as given.' },
      names: PAGE_NAMES,
      nextCursor: NEXT_CURSOR,
    },
  },
  ChangePage: {
    type: 'object',
    required: ['changes', 'next', 'hasMore'],
    additionalProperties: false,
    properties: {
      changes: {
        type: 'array',
        maxItems: MAX_CHANGES_PAGE,
        items: { $ref: '#/components/schemas/Change' },
        description: 'Oldest first, in commit order.',
      },
      next: {
        type: 'string',
        maxLength: 64,
        description:
          'Pass it as `after` for the next page: past every entry this page looked at. Opaque. The same as `after` ' +
          'when nothing was there.',
      },
      hasMore: { type: 'boolean', description: 'Whether entries after `next` were already there.' },
    },
  },
  Change: {
    type: 'object',
    required: ['cursor', 'name', 'kind', 'at'],
    additionalProperties: false,
    properties: {
      cursor: {
        type: 'string',
        maxLength: 64,
        description: "This entry's place in the log; `after` it: what came later.",
      },
      name: { type: 'string', description: 'The canonical name ID.' },
      kind: {
        type: 'string',
        enum: ['created', 'updated', 'removed'],
        description: '`updated`: what `GET /api/{name_id}` answers changed.',
      },
      at: { type: 'string', format: 'date-time', description: 'When the change was committed (UTC).' },
    },
  },
  Profile: {
    type: 'object',
    required: ['name', 'description', 'image', 'attributes', 'records'],
    additionalProperties: false,
    properties: {
      name: { type: 'string', description: 'Canonical name ID (NFC, lower case).' },
      description: { type: 'string' },
      image: { type: 'string', description: 'Avatar URL; empty when unset.' },
      attributes: { type: 'array', items: { $ref: '#/components/schemas/Attribute' }, minItems: 3, maxItems: 3 },
      records: {
        type: 'object',
        description: 'Records by numeric key. Locate a record by its `type`, not by its key.',
        propertyNames: { pattern: '^(0|[1-9][0-9]*)$' },
        additionalProperties: { $ref: '#/components/schemas/Record' },
      },
    },
  },
  Attribute: {
    type: 'object',
    required: ['trait_type', 'value'],
    additionalProperties: false,
    properties: {
      trait_type: { type: 'string', enum: ['domain', 'level', 'length'] },
      value: { oneOf: [{ type: 'string' }, { type: 'integer' }] },
    },
  },
  Record: {
    type: 'object',
    required: ['type', 'value'],
    additionalProperties: false,
    properties: {
      type: { type: 'string', examples: ['name', 'email', 'website', 'phone', 'social', 'crypto'] },
      value: {
        oneOf: [{ type: 'string' }, { type: 'object', additionalProperties: { type: 'string' } }],
      },
    },
  },
  BatchRequest: {
    type: 'object',
    required: ['names'],
    description: 'Other keys are ignored.',
    properties: {
      names: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: MAX_NAMES_PER_REQUEST },
    },
  },
  BatchResult: {
    type: 'object',
    required: ['profiles'],
    additionalProperties: false,
    properties: {
      profiles: {
        type: 'object',
        description: 'By canonical name, in the order first asked; null where there is no profile.',
        additionalProperties: { anyOf: [{ $ref: '#/components/schemas/Profile' }, { type: 'null' }] },
      },
    },
  },
  OwnerCheckResult: {
    type: 'object',
    required: ['hasCreated', 'email', 'name'],
    additionalProperties: false,
    properties: {
      hasCreated: { type: 'boolean' },
      email: { type: 'string', description: 'The e-mail as given, trimmed.' },
      name: { type: 'string', description: 'The name ID as given, trimmed.' },
    },
  },
  Jrd: {
    type: 'object',
    required: ['subject', 'aliases', 'links'],
    additionalProperties: false,
    properties: {
      subject: { type: 'string', description: '`acct:` and the canonical name ID.', examples: ['acct:demo@me'] },
      aliases: { type: 'array', items: { type: 'string', format: 'uri' }, description: 'The REST profile URL.' },
      links: {
        type: 'array',
        items: {
          type: 'object',
          required: ['rel', 'type', 'href'],
          additionalProperties: false,
          properties: {
            rel: {
              type: 'string',
              enum: ['self', 'http://webfinger.net/rel/avatar', 'http://webfinger.net/rel/profile-page'],
            },
            type: { type: 'string', examples: ['application/json', 'image/*', 'text/html'] },
            href: { type: 'string', format: 'uri' },
          },
        },
      },
    },
  },
  WebhookRequest: {
    type: 'object',
    required: ['url'],
    additionalProperties: false,
    properties: {
      url: {
        type: 'string',
        maxLength: MAX_WEBHOOK_URL_LENGTH,
        description:
          'Where deliveries go: `https`, or `http` to a network `WEBHOOK_PRIVATE_ORIGINS` lists; no credentials; a host ' +
          'whose every address the service may reach (public, or in `WEBHOOK_PRIVATE_ORIGINS`).',
        examples: ['https://app.example/hooks/names'],
      },
      names: {
        type: 'array',
        items: { type: 'string' },
        maxItems: MAX_WEBHOOK_NAMES,
        description: 'Only changes of these name IDs (validated as for lookups).',
      },
      namespaces: {
        type: 'array',
        items: { type: 'string' },
        maxItems: MAX_WEBHOOK_NAMESPACES,
        description: 'Only changes of names in these namespaces (with `names`: either).',
      },
      events: {
        type: 'array',
        items: EVENT_TYPE,
        minItems: 1,
        maxItems: EVENT_TYPES.length,
        description: 'The event types wanted; absent: all three.',
      },
      description: { type: ['string', 'null'], maxLength: MAX_DESCRIPTION_LENGTH },
    },
  },
  Webhook: webhookSchema(false),
  WebhookWithSecret: webhookSchema(true),
  WebhookList: {
    type: 'object',
    required: ['webhooks'],
    additionalProperties: false,
    properties: {
      webhooks: {
        type: 'array',
        items: { $ref: '#/components/schemas/Webhook' },
        maxItems: MAX_WEBHOOKS_PER_KEY,
        description: 'Oldest first.',
      },
    },
  },
  WebhookDeliveries: {
    type: 'object',
    required: ['deliveries'],
    additionalProperties: false,
    properties: {
      deliveries: {
        type: 'array',
        maxItems: 100,
        description: 'The latest attempts, newest first.',
        items: {
          type: 'object',
          required: ['eventId', 'type', 'name', 'attempt', 'at', 'status', 'durationMs', 'error', 'nextAttemptAt'],
          additionalProperties: false,
          properties: {
            eventId: {
              type: 'string',
              description: 'The `webhook-id` of the delivery: the same on every attempt of one event.',
            },
            type: EVENT_TYPE,
            name: { type: 'string', description: 'The canonical name ID.' },
            attempt: { type: 'integer', minimum: 1 },
            at: { type: 'string', format: 'date-time', description: 'When the attempt ended (UTC).' },
            status: { type: ['integer', 'null'], description: "The receiver's HTTP status; null without an answer." },
            durationMs: { type: 'integer', minimum: 0 },
            error: {
              type: ['string', 'null'],
              description:
                'Why it failed, in a few words (`timeout`, `connection refused`, `answered 500`…); null for a 2xx.',
            },
            nextAttemptAt: {
              type: ['string', 'null'],
              format: 'date-time',
              description: 'When it is tried again; null when it was delivered or will not be tried again.',
            },
          },
        },
      },
    },
  },
  ReplayRequest: {
    type: 'object',
    required: ['after'],
    additionalProperties: false,
    properties: {
      after: {
        type: 'string',
        maxLength: 64,
        description: "A change-log cursor (`GET /api/changes`, a delivery's `data.cursor`): every change after it.",
      },
    },
  },
  Error: {
    type: 'object',
    required: ['error'],
    additionalProperties: false,
    properties: { error: { type: 'string' } },
  },
  InvalidInputError: {
    type: 'object',
    required: ['error'],
    additionalProperties: false,
    properties: {
      error: { type: 'string' },
      name: { type: 'string', description: 'The first invalid name, as given.' },
    },
  },
};

const integerHeader = (description: string): Header => ({ schema: { type: 'integer' }, description });
const stringHeader = (description: string, required = true): Header => ({
  schema: { type: 'string' },
  description,
  required,
});

export const HEADERS: Readonly<Record<string, Header>> = {
  'X-Request-Id': stringHeader("The request's id: the client's own when it sent a sane one, else a UUID."),
  'Access-Control-Allow-Origin': { schema: { type: 'string', const: '*' }, description: 'Any origin.', required: true },
  'RateLimit-Limit': integerHeader('Requests allowed per window (sent while the budget is on).'),
  'RateLimit-Remaining': integerHeader('Requests left in this window (sent while the budget is on).'),
  'RateLimit-Reset': integerHeader('Seconds until the window resets (sent while the budget is on).'),
  'Retry-After': { ...integerHeader('Seconds to wait before retrying.'), required: true },
  ETag: stringHeader('Strong validator of the answer.'),
  'Cache-Control': stringHeader(
    "How long the answer may be cached, e.g. `public, max-age=60` or `no-store`; with CACHE_PURGE_URLS set `public, max-age=60, s-maxage=86400` for shared caches, or `private, max-age=60` for an answer computed around a change. An answer to a request with an API key is `private` with the `max-age` others get (`private, max-age=60`), never `public` or `s-maxage`: its RateLimit headers are the key's.",
  ),
  'Cache-Control-Missing': stringHeader(
    'Sent while CACHE_PURGE_URLS is set: `public, max-age=60, s-maxage=86400` (shared caches keep the 404 until the name is created), or `private, max-age=60`; to a request with an API key always, `private` (with purging `private, max-age=60`).',
    false,
  ),
  Vary: stringHeader(
    "`Accept-Encoding` (and `Accept` on GraphQL and avatars): the answer comes in the negotiated content coding; an avatar image's format follows `Accept`.",
    false,
  ),
  xkey: stringHeader(
    'Cache tags of what the answer shows, space-separated (`all p:<name> ns:<namespace> search wallets name-check`), for Varnish; sent while CACHE_PURGE_URLS is set, never on an answer to a request with an API key (no shared cache keeps it).',
    false,
  ),
  'Surrogate-Key': stringHeader('The same tags as `xkey`, for Fastly-style caches.', false),
  Allow: stringHeader('The methods this path serves.'),
  Location: stringHeader('Where the avatar is.'),
  // Under a name of its own: the same header, on a new webhook endpoint.
  'Location-Webhook': stringHeader('The URL of the new endpoint (`PUBLIC_URL` and `/api/webhooks/{id}`).'),
  'Content-Disposition': stringHeader(
    '`attachment; filename="<name>.vcf"`, with RFC 6266 `filename*` when the name is not ASCII.',
  ),
  'Content-Security-Policy': stringHeader("`default-src 'none'; style-src 'unsafe-inline'`."),
  'X-Content-Type-Options': stringHeader('`nosniff`.'),
  'WWW-Authenticate': stringHeader('`Bearer`: send a valid API key, or none.'),
  // Under a name of its own: the same header, absent when the answer came before the key was checked.
  'Cache-Control-Keyed-Failure': stringHeader(
    '`no-store`; absent when the database failed before the API key could be checked.',
    false,
  ),
  // Under a name of its own: the same header, sent only when the API key was refused.
  'Cache-Control-Key-Refused': stringHeader('`no-store` when the answer refuses an API key.', false),
};

/** The two ways to send an API key; optional everywhere (`{}` in `security`: keyless). */
export const SECURITY_SCHEMES: Readonly<Record<string, Schema>> = {
  ApiKeyBearer: {
    type: 'http',
    scheme: 'bearer',
    description:
      'An API key (`nps_` and at least 32 base62 characters) as `Authorization: Bearer <key>`: requests are ' +
      "limited per key, with the key's own limits, instead of per client address. An unknown or revoked key " +
      'answers 401, never as if there were no key. One key per request: two `Authorization` headers answer 401. ' +
      'Never in the URL: an `api_key` or `apiKey` query parameter, in any spelling, answers 400.',
  },
  ApiKeyHeader: {
    type: 'apiKey',
    in: 'header',
    name: 'X-API-Key',
    description:
      'The same API key in `X-API-Key`, once. With both headers, they must hold the same key (it counts once); ' +
      'two `X-API-Key` headers, or two different keys, answer 401.',
  },
};

/** What every path answers to an invalid, unknown or revoked API key. */
export const INVALID_API_KEY = errorAnswer(
  'An API key that is malformed, unknown or revoked, or more than one key: two `Authorization` or two `X-API-Key` headers, or both headers with different keys.',
  'Invalid API key',
  { ...headers('WWW-Authenticate'), ...CACHING },
);

/** `Cache-Control: no-store` where a 400 of the path's own carries none. */
export const KEY_REFUSED_CACHING: Headers = { 'Cache-Control': header('Cache-Control-Key-Refused') };

/** What every path answers to an API key in its query string (`api_key`, `apiKey`). */
export const API_KEY_IN_URL = errorAnswer(
  'An API key in the query string (`api_key` or `apiKey`, in any case and any percent-encoding of the name, e.g. `%61pi_key`): keys go in a header.',
  'Send the API key in a header, not in the URL',
  CACHING,
);
