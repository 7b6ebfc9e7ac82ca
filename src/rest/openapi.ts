/**
 * The OpenAPI 3.1 description of the REST surface, served at /api/openapi.json. Tests validate
 * real answers of every documented path, method and status against it (bodies and headers, HEAD
 * included) and lint it with Redocly's recommended rules, so it cannot drift from the code.
 *
 * Every answer carries X-Request-Id and, on these paths, `Access-Control-Allow-Origin: *`; a
 * method a path does not serve gets 405 with `Allow`, documented under each of its operations
 * (OpenAPI has no place for "any other method"). `HEAD` answers as `GET` without a body.
 */
import { JSON_CONTENT_TYPE, sendBody } from '../http/respond.js';
import { INVALID_NAME_MESSAGE } from '../names/name-id.js';
import { AVATAR_SIZE, INVALID_SIZE_MESSAGE, MAX_FALLBACK_URL_LENGTH } from '../service/avatars.js';
import { INVALID_CURSOR_MESSAGE } from '../service/cursors.js';
import {
  DEFAULT_PAGE_SIZE,
  INVALID_ADDRESS_MESSAGE,
  MAX_ADDRESS_LENGTH,
  MAX_PAGE_SIZE,
  MISSING_PREFIX_MESSAGE,
} from '../service/discovery.js';
import { MAX_NAMES_PER_REQUEST } from '../service/profiles-service.js';
import { RESOURCE_REQUIRED_MESSAGE } from '../service/webfinger.js';
import { GET_HEAD, type RestRoute } from './route.js';

export interface OpenApiOptions {
  /** PUBLIC_URL: the one server of the document. */
  publicUrl: string;
}

type Json = Record<string, unknown>;
type Headers = Record<string, Json>;

const header = (name: string): Json => ({ $ref: `#/components/headers/${name}` });
const headers = (...names: string[]): Headers => Object.fromEntries(names.map((name) => [name, header(name)]));

/** On every answer of these paths. */
const EVERY = headers('X-Request-Id', 'Access-Control-Allow-Origin');
const RATE_LIMIT = headers('RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset');
const RETRY_AFTER = headers('Retry-After');
const CACHING = headers('Cache-Control');
const VALIDATOR = headers('ETag');

const jsonContent = (schema: string, example?: unknown): Json => ({
  'application/json': {
    schema: { $ref: `#/components/schemas/${schema}` },
    ...(example === undefined ? {} : { example }),
  },
});

const errorAnswer = (description: string, example: string, extra: Headers = {}): Json => ({
  description,
  headers: { ...EVERY, ...extra },
  content: jsonContent('Error', { error: example }),
});

const methodNotAllowed = (allow: string): Json => ({
  description: `Another method than ${allow} on this path; \`Allow\` lists those.`,
  headers: { ...EVERY, ...headers('Allow') },
  content: jsonContent('Error', { error: 'Method not allowed' }),
});

const internalError = (extra: Headers = {}): Json =>
  errorAnswer('Something unexpected failed; the details are only in the server log.', 'Internal server error', extra);

const tooManyRequests = (extra: Headers = {}): Json =>
  errorAnswer('The client used up its budget.', 'Too many requests, retry in 42 seconds', {
    ...RATE_LIMIT,
    ...RETRY_AFTER,
    ...extra,
  });

const unavailable = (extra: Headers = {}): Json =>
  errorAnswer('The database cannot be reached or is too slow; retry later.', 'Service unavailable', {
    ...RATE_LIMIT,
    ...RETRY_AFTER,
    ...extra,
  });

const notModified = (extra: Headers = {}): Json => ({
  description: 'Not modified: `If-None-Match` matched the current ETag. No body.',
  headers: { ...EVERY, ...VALIDATOR, ...CACHING, ...RATE_LIMIT, ...extra },
});

/**
 * The HEAD twin of a GET operation: the same answers and headers, no bodies. (The 405 keeps its
 * body: it is the answer to another method.)
 */
function headOf(get: Json): Json {
  const responses = get.responses as Record<string, Json>;
  return {
    ...get,
    operationId: `${String(get.operationId)}Head`,
    summary: `${String(get.summary)} (headers only)`,
    description: 'Answers exactly as GET does, without the body.',
    responses: Object.fromEntries(
      Object.entries(responses).map(([status, { content, ...rest }]) => [
        status,
        status === '405' ? { ...rest, content } : rest,
      ]),
    ),
  };
}

const getAndHead = (get: Json): Json => ({ get, head: headOf(get) });

const NAME_ID_PARAMETER = {
  name: 'name_id',
  in: 'path',
  required: true,
  description: 'A name ID `<local>@<domain>`, case-insensitive, optionally percent-encoded (decoded once).',
  schema: { type: 'string', maxLength: 1024 },
  example: 'demo@me',
};

const GET_AND_HEAD = 'GET and HEAD';

function openApiDocumentPath(): Json {
  return getAndHead({
    operationId: 'openApiDocument',
    summary: 'This OpenAPI document',
    tags: ['Meta'],
    responses: {
      '200': {
        description: 'The OpenAPI 3.1 document.',
        headers: EVERY,
        content: { 'application/json': { schema: { type: 'object' } } },
      },
      '405': methodNotAllowed(GET_AND_HEAD),
    },
  });
}

function ownerCheckPath(): Json {
  const noStore = { ...CACHING, ...RATE_LIMIT };
  return getAndHead({
    operationId: 'ownerCheck',
    summary: 'Whether an e-mail owns the namespace of a name ID or created it',
    description:
      'Rate-limited per client (10 per minute by default); every request counts, valid or not. ' +
      'Answers are never cached (`Cache-Control: no-store`).',
    tags: ['Owner check'],
    parameters: [
      {
        name: 'email',
        in: 'query',
        required: true,
        description: 'The e-mail to check; trimmed.',
        schema: { type: 'string', maxLength: 254 },
        example: 'you@example.net',
      },
      {
        name: 'name',
        in: 'query',
        required: true,
        description: 'The name ID; trimmed.',
        schema: { type: 'string' },
        example: 'demo@me',
      },
    ],
    responses: {
      '200': {
        description: 'The check was made.',
        headers: { ...EVERY, ...noStore },
        content: jsonContent('OwnerCheckResult'),
      },
      '400': errorAnswer(
        'A parameter is missing, blank, given twice, or invalid (the e-mail is checked first).',
        'Both email and name parameters are required',
        noStore,
      ),
      '405': methodNotAllowed(GET_AND_HEAD),
      '429': tooManyRequests(CACHING),
      '500': internalError(CACHING),
      '503': unavailable(CACHING),
    },
  });
}

/** The answers every profile-budgeted lookup shares. */
function lookupErrors(allow: string): Record<string, Json> {
  return {
    '405': methodNotAllowed(allow),
    '429': tooManyRequests(),
    '500': internalError(),
    '503': unavailable(),
  };
}

function profilePath(): Json {
  return {
    parameters: [NAME_ID_PARAMETER],
    ...getAndHead({
      operationId: 'profile',
      summary: 'The public profile of a name ID',
      description: 'One point of the profile budget.',
      tags: ['Profiles'],
      responses: {
        '200': {
          description: 'The profile.',
          headers: { ...EVERY, ...VALIDATOR, ...CACHING, ...RATE_LIMIT },
          content: jsonContent('Profile'),
        },
        '304': notModified(),
        '400': errorAnswer('An invalid name ID.', INVALID_NAME_MESSAGE, RATE_LIMIT),
        '404': errorAnswer('A valid name ID without a profile.', 'Profile not found', RATE_LIMIT),
        ...lookupErrors(GET_AND_HEAD),
      },
    }),
  };
}

function eventsPath(): Json {
  return {
    parameters: [NAME_ID_PARAMETER],
    ...getAndHead({
      operationId: 'profileEvents',
      summary: 'Live updates of a profile (Server-Sent Events)',
      description:
        'A `text/event-stream` for `EventSource`: after each change of the profile, once lookups answer it, ' +
        '`event: profile` whose data is exactly the `GET /api/{name_id}` document, or `event: deleted` with ' +
        '`{"name": <name ID>}` when the name no longer has a profile. A comment line every 15 seconds keeps ' +
        'proxies from closing the stream; a client that does not read is disconnected. One point of the profile ' +
        'budget when opened; at most 20 open subscriptions per client address (GraphQL `profileChanged` ' +
        'included), the next gets 429.',
      tags: ['Profiles'],
      responses: {
        '200': {
          description:
            'The stream (`Cache-Control: no-store`); it stays open until the client or the server (at shutdown) ends it.',
          headers: { ...EVERY, ...CACHING, ...RATE_LIMIT },
          content: {
            'text/event-stream': {
              schema: { type: 'string' },
              example: 'event: profile\ndata: {"name":"demo@me",…}\n\n',
            },
          },
        },
        '400': errorAnswer('An invalid name ID.', INVALID_NAME_MESSAGE, RATE_LIMIT),
        '405': methodNotAllowed(GET_AND_HEAD),
        '429': tooManyRequests(),
      },
    }),
  };
}

function batchPath(): Json {
  const allow = 'GET, HEAD and POST';
  const invalid = (extra: Headers): Json => ({
    description:
      'No names, more than 100, an unreadable body, or an invalid name (then `name` is the first invalid one, as given).',
    headers: { ...EVERY, ...RATE_LIMIT, ...extra },
    content: jsonContent('InvalidInputError', { error: INVALID_NAME_MESSAGE, name: 'not-a-name' }),
  });
  const get = {
    operationId: 'profiles',
    summary: 'Up to 100 profiles at once',
    description:
      'One point of the profile budget per distinct name; answered with one database query. Keys are the ' +
      'canonical names in the order first asked (equal names answered once), `null` where there is no profile.',
    tags: ['Profiles'],
    parameters: [
      {
        name: 'names',
        in: 'query',
        required: true,
        description:
          'Comma-separated name IDs (a name ID has no comma); the parameter may also be repeated. ' +
          `1 to ${MAX_NAMES_PER_REQUEST}.`,
        style: 'form',
        explode: false,
        schema: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: MAX_NAMES_PER_REQUEST },
        example: ['demo@me', 'nobody@me'],
      },
    ],
    responses: {
      '200': {
        description: 'The profiles.',
        headers: { ...EVERY, ...VALIDATOR, ...CACHING, ...RATE_LIMIT },
        content: jsonContent('BatchResult'),
      },
      '304': notModified(),
      '400': invalid({}),
      ...lookupErrors(allow),
    },
  };
  const noStore = CACHING;
  return {
    ...getAndHead(get),
    post: {
      operationId: 'profilesByPost',
      summary: 'Up to 100 profiles at once, names in a JSON body',
      description: 'As the GET form, for lists that do not fit a URL. Answers are not cached (`no-store`).',
      tags: ['Profiles'],
      requestBody: {
        required: true,
        description: 'At most 64 KiB of `application/json`.',
        content: { 'application/json': { schema: { $ref: '#/components/schemas/BatchRequest' } } },
      },
      responses: {
        '200': {
          description: 'The profiles.',
          headers: { ...EVERY, ...noStore, ...RATE_LIMIT },
          content: jsonContent('BatchResult'),
        },
        '400': invalid(noStore),
        '405': methodNotAllowed(allow),
        '413': errorAnswer('The body is over 64 KiB.', 'Request body too large, the limit is 65536 bytes', noStore),
        '415': errorAnswer('The body is not `application/json`.', 'Expected application/json', noStore),
        '429': tooManyRequests(noStore),
        '500': internalError(noStore),
        '503': unavailable(noStore),
      },
    },
  };
}

function avatarPath(): Json {
  const caching = {
    'Cache-Control': {
      $ref: '#/components/headers/Cache-Control',
      description:
        '`public, max-age=31536000, immutable` when `v` is the current avatar version, else the profile `Cache-Control`.',
    },
  };
  return {
    parameters: [NAME_ID_PARAMETER],
    ...getAndHead({
      operationId: 'avatar',
      summary: 'The avatar of a name ID, with a fallback',
      description:
        'Redirects to the profile `image` when it is an http(s) URL (the service never fetches it). Otherwise ' +
        'the `fallback`: a generated SVG with the initial, a 404, or a redirect to a URL of the client. ' +
        'One point of the profile budget.',
      tags: ['Avatars'],
      parameters: [
        {
          name: 'size',
          in: 'query',
          description: 'Width and height of the generated SVG, in pixels.',
          schema: { type: 'integer', minimum: AVATAR_SIZE.min, maximum: AVATAR_SIZE.max, default: AVATAR_SIZE.default },
        },
        {
          name: 'fallback',
          in: 'query',
          description:
            '`initials`, `404`, or an https URL to redirect to when there is no http(s) image (a URI once serialised: ' +
            'characters such as `\\`, `{`, `|` percent-encoded).',
          schema: {
            anyOf: [
              { type: 'string', enum: ['initials', '404'] },
              { type: 'string', format: 'uri', pattern: '^https://', maxLength: MAX_FALLBACK_URL_LENGTH },
            ],
            default: 'initials',
          },
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
          description: 'The generated SVG: safe to open directly (no script, a strict Content-Security-Policy).',
          headers: {
            ...EVERY,
            ...VALIDATOR,
            ...caching,
            ...RATE_LIMIT,
            ...headers('Content-Security-Policy', 'X-Content-Type-Options'),
          },
          content: { 'image/svg+xml': { schema: { type: 'string' } } },
        },
        '302': {
          description: 'To the stored image, or to the fallback URL.',
          headers: { ...EVERY, ...headers('Location'), ...caching, ...RATE_LIMIT },
        },
        '304': notModified(),
        '400': errorAnswer(
          'An invalid name ID, size or fallback (checked in that order).',
          INVALID_SIZE_MESSAGE,
          RATE_LIMIT,
        ),
        '404': errorAnswer(
          '`fallback=404` and no profile (`Profile not found`) or no http(s) image (`No avatar`).',
          'No avatar',
          RATE_LIMIT,
        ),
        ...lookupErrors(GET_AND_HEAD),
      },
    }),
  };
}

function vcardPath(): Json {
  return {
    parameters: [NAME_ID_PARAMETER],
    ...getAndHead({
      operationId: 'vcard',
      summary: 'The profile as a vCard 4.0 (RFC 6350)',
      description: 'A download for address books. One point of the profile budget.',
      tags: ['Profiles'],
      responses: {
        '200': {
          description: 'The vCard.',
          headers: { ...EVERY, ...VALIDATOR, ...CACHING, ...RATE_LIMIT, ...headers('Content-Disposition') },
          content: { 'text/vcard': { schema: { type: 'string' } } },
        },
        '304': notModified(),
        '400': errorAnswer('An invalid name ID.', INVALID_NAME_MESSAGE, RATE_LIMIT),
        '404': errorAnswer('A valid name ID without a profile.', 'Profile not found', RATE_LIMIT),
        ...lookupErrors(GET_AND_HEAD),
      },
    }),
  };
}

function webfingerPath(): Json {
  return getAndHead({
    operationId: 'webfinger',
    summary: 'WebFinger (RFC 7033): links of an acct: name ID',
    description: 'One point of the profile budget.',
    tags: ['WebFinger'],
    parameters: [
      {
        name: 'resource',
        in: 'query',
        required: true,
        description: '`acct:<name_id>` (the account may be percent-encoded, RFC 7565).',
        schema: { type: 'string' },
        example: 'acct:demo@me',
      },
      {
        name: 'rel',
        in: 'query',
        description: 'Only links of these relations (RFC 7033 §4.3); may be repeated.',
        style: 'form',
        explode: true,
        schema: { type: 'array', items: { type: 'string' } },
      },
    ],
    responses: {
      '200': {
        description: 'The JSON Resource Descriptor.',
        headers: { ...EVERY, ...CACHING, ...RATE_LIMIT },
        content: { 'application/jrd+json': { schema: { $ref: '#/components/schemas/Jrd' } } },
      },
      '400': errorAnswer(
        'No resource, or not an `acct:` URI of a valid name ID.',
        RESOURCE_REQUIRED_MESSAGE,
        RATE_LIMIT,
      ),
      '404': errorAnswer('A valid name ID without a profile.', 'Profile not found', RATE_LIMIT),
      ...lookupErrors(GET_AND_HEAD),
    },
  });
}

const PAGE_PARAMETERS = [
  {
    name: 'limit',
    in: 'query',
    required: false,
    description: `Names per page, 1 to ${MAX_PAGE_SIZE} (default ${DEFAULT_PAGE_SIZE}). A page is cut short when the profile budget has fewer points left.`,
    schema: { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE },
  },
  {
    name: 'cursor',
    in: 'query',
    required: false,
    description: 'The `nextCursor` of the previous page of the same query; absent or empty for the first page.',
    schema: { type: 'string' },
  },
];

const LISTING_BUDGET =
  'Costs one point of the profile budget per name returned, at least one, like looking the names up one by one.';

/** A page of names: search and reverse lookup answer alike. */
function listing(get: Json, invalidDescription: string, invalidExample: string, schema: string): Json {
  return getAndHead({
    ...get,
    tags: ['Discovery'],
    responses: {
      '200': {
        description: 'A page of names in Unicode code-point order.',
        headers: { ...EVERY, ...VALIDATOR, ...CACHING, ...RATE_LIMIT },
        content: jsonContent(schema),
      },
      '304': notModified(),
      '400': errorAnswer(invalidDescription, invalidExample, RATE_LIMIT),
      ...lookupErrors(GET_AND_HEAD),
    },
  });
}

function searchPath(): Json {
  return listing(
    {
      operationId: 'searchProfiles',
      summary: 'Names whose local part starts with a prefix',
      description: `Ordered by canonical name in Unicode code-point order, a page at a time. ${LISTING_BUDGET}`,
      parameters: [
        {
          name: 'prefix',
          in: 'query',
          required: true,
          description:
            '1 to 63 letters, digits, `.`, `_` or `-`, starting with a letter or digit; canonicalised like a name (NFC, lower case).',
          schema: { type: 'string' },
          example: 'de',
        },
        {
          name: 'namespace',
          in: 'query',
          required: false,
          description: 'Only names in this namespace; all when absent.',
          schema: { type: 'string' },
          example: 'me',
        },
        ...PAGE_PARAMETERS,
      ],
    },
    'No prefix, an invalid prefix, namespace, limit or cursor.',
    MISSING_PREFIX_MESSAGE,
    'NamePage',
  );
}

function walletPath(): Json {
  return {
    parameters: [
      {
        name: 'address',
        in: 'path',
        required: true,
        description: `The address, 1 to ${MAX_ADDRESS_LENGTH} characters, percent-encoded where needed.`,
        schema: { type: 'string' },
        example: '0x0000000000000000000000000000000000de0000',
      },
    ],
    ...listing(
      {
        operationId: 'profilesByWallet',
        summary: 'Names of the profiles whose crypto records list an address',
        description:
          '`0x` (EVM) addresses match without regard to case, others exactly. These are claims the profiles make, ' +
          `not verified ownership. Ordered by name in Unicode code-point order. ${LISTING_BUDGET}`,
        parameters: PAGE_PARAMETERS,
      },
      'An invalid address, limit or cursor.',
      INVALID_ADDRESS_MESSAGE,
      'WalletPage',
    ),
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

const SCHEMAS: Json = {
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

const integerHeader = (description: string): Json => ({ schema: { type: 'integer' }, description });
const stringHeader = (description: string, required = true): Json => ({
  schema: { type: 'string' },
  description,
  required,
});

const HEADERS: Json = {
  'X-Request-Id': stringHeader("The request's id: the client's own when it sent a sane one, else a UUID."),
  'Access-Control-Allow-Origin': { schema: { type: 'string', const: '*' }, description: 'Any origin.', required: true },
  'RateLimit-Limit': integerHeader('Requests allowed per window (sent while the budget is on).'),
  'RateLimit-Remaining': integerHeader('Requests left in this window (sent while the budget is on).'),
  'RateLimit-Reset': integerHeader('Seconds until the window resets (sent while the budget is on).'),
  'Retry-After': { ...integerHeader('Seconds to wait before retrying.'), required: true },
  ETag: stringHeader('Strong validator of the answer.'),
  'Cache-Control': stringHeader('How long the answer may be cached, e.g. `public, max-age=60` or `no-store`.'),
  Allow: stringHeader('The methods this path serves.'),
  Location: stringHeader('Where the avatar is.'),
  'Content-Disposition': stringHeader(
    '`attachment; filename="<name>.vcf"`, with RFC 6266 `filename*` when the name is not ASCII.',
  ),
  'Content-Security-Policy': stringHeader("`default-src 'none'; style-src 'unsafe-inline'`."),
  'X-Content-Type-Options': stringHeader('`nosniff`.'),
};

export function openApiDocument({ publicUrl }: OpenApiOptions): Json {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Name profile service (REST)',
      version: '1.0.0',
      description:
        'Public profiles of name IDs, their avatars, vCards and WebFinger links, and an ownership check. The same ' +
        'data is available, field by field, at /graphql.',
      license: {
        name: 'UNLICENSED: a private project; no licence to use, copy or distribute it is granted',
        identifier: 'LicenseRef-UNLICENSED',
      },
    },
    servers: [{ url: publicUrl, description: 'This deployment (PUBLIC_URL).' }],
    // Public data: no authentication; budgets are per client address.
    security: [],
    tags: [
      { name: 'Profiles', description: 'Profiles of name IDs: one, many, or as a vCard.' },
      { name: 'Avatars', description: 'Avatar images, with a generated fallback.' },
      { name: 'Owner check', description: 'Whether an e-mail owns or created a name (rate-limited).' },
      { name: 'WebFinger', description: 'Discovery of name IDs as `acct:` URIs (RFC 7033).' },
      { name: 'Discovery', description: 'Prefix search, and reverse lookup by wallet address.' },
      { name: 'Meta', description: 'This description.' },
    ],
    paths: {
      '/api/openapi.json': openApiDocumentPath(),
      '/api/owner-check': ownerCheckPath(),
      '/api/profiles': batchPath(),
      '/api/{name_id}': profilePath(),
      '/api/{name_id}/avatar': avatarPath(),
      '/api/{name_id}/vcard': vcardPath(),
      '/api/{name_id}/events': eventsPath(),
      '/.well-known/webfinger': webfingerPath(),
      '/api/search': searchPath(),
      '/api/wallet/{address}': walletPath(),
    },
    components: { schemas: SCHEMAS, headers: HEADERS },
  };
}

/** `GET /api/openapi.json`: the document, written once at start-up. */
export const openApiRoute: RestRoute = {
  pattern: '/api/openapi.json',
  methods: GET_HEAD,
  handler: (deps) => {
    const json = JSON.stringify(openApiDocument({ publicUrl: deps.config.publicUrl }));
    return (req, res) => sendBody(req, res, 200, json, { 'Content-Type': JSON_CONTENT_TYPE });
  },
};
