/**
 * Batch lookup for apps that are not GraphQL clients: `GET /api/profiles?names=a@x,b@y` and
 * `POST /api/profiles` with `{"names": ["a@x", "b@y"]}`. Both call the service's
 * `lookupProfiles`, the function behind GraphQL's `profiles`: the same validation, one point of
 * the profile budget per distinct name, the profile cache, and one SQL statement for the names
 * the cache does not hold.
 *
 * The answer is `{"profiles": {"<canonical name>": <the /api/{name_id} document> | null}}`,
 * keys in the order first asked; each document is the profile's ready bytes, embedded as they are.
 */
import { createHash } from 'node:crypto';
import { sendEncoded } from '../http/compression.js';
import { INVALID_JSON_BODY_MESSAGE, readJsonObject } from '../http/json-body.js';
import { JSON_CONTENT_TYPE, sendError } from '../http/respond.js';
import { canonicalName, INVALID_NAME_MESSAGE, isNameList } from '../names/name-id.js';
import type { Profile } from '../profiles/profile.js';
import { MAX_NAMES_PER_REQUEST } from '../service/profiles-service.js';
import type { RestDependencies } from './dependencies.js';
import { sendValidated } from './etag-answer.js';
import {
  CACHEABLE,
  CACHING,
  EVERY,
  errorAnswer,
  type Headers,
  internalError,
  jsonContent,
  LOOKUP_ERRORS,
  notModified,
  type Operation,
  RATE_LIMIT,
  type Response,
  schemaRef,
  tooManyRequests,
  unavailable,
} from './openapi-components.js';
import { queryOf } from './query.js';
import { rateLimitHeaders } from './rate-limit-headers.js';
import type { RestRoute } from './route.js';
import { type ServiceCall, serviceHandler } from './service-handler.js';

export const NAMES_REQUIRED_MESSAGE = 'The names parameter is required';
/** Room for 100 names of the longest kind as percent-free JSON, with some to spare. */
export const MAX_BATCH_BODY_BYTES = 64 * 1024;

const NO_STORE = { 'Cache-Control': 'no-store' } as const;

export const batchRoute: RestRoute = {
  pattern: '/api/profiles',
  methods: ['GET', 'HEAD', 'POST'],
  handler: (deps) =>
    serviceHandler(deps, (call) => (call.req.method === 'POST' ? batchByPost(call, deps) : batchByGet(call, deps)), {
      // The POST answers are never cached, errors included.
      errorHeaders: (req) => (req.method === 'POST' ? NO_STORE : {}),
    }),
  openApi: { get: byGetOperation(), post: byPostOperation() },
};

async function batchByGet(call: ServiceCall, deps: RestDependencies): Promise<void> {
  const { req, res } = call;
  // `names` given several times is read as one list: `?names=a@x&names=b@y` = `?names=a@x,b@y`.
  const given = queryOf(req)
    .getAll('names')
    .filter((value) => value !== '');
  if (given.length === 0) {
    sendError(req, res, 400, NAMES_REQUIRED_MESSAGE);
    return;
  }
  // A name ID cannot contain a comma, so splitting on commas loses nothing.
  await answerBatch(call, deps, given.join(',').split(','), 'GET');
}

async function batchByPost(call: ServiceCall, deps: RestDependencies): Promise<void> {
  const { req, res } = call;
  const body = await readJsonObject(req, res, MAX_BATCH_BODY_BYTES, NO_STORE);
  if (body === undefined) return;
  // Other keys are ignored; `names` that is not a list of strings is no batch.
  const names: unknown = body.names;
  if (!isNameList(names)) sendError(req, res, 400, INVALID_JSON_BODY_MESSAGE, NO_STORE);
  else if (names.length === 0) sendError(req, res, 400, NAMES_REQUIRED_MESSAGE, NO_STORE);
  else await answerBatch(call, deps, names, 'POST');
}

async function answerBatch(
  { req, res, request }: ServiceCall,
  deps: RestDependencies,
  names: string[],
  method: 'GET' | 'POST',
): Promise<void> {
  const { value: profiles, rateLimit } = await deps.profiles.lookupProfiles(request, names);
  // Every name is valid here; equal names after canonicalisation are answered once, first place kept.
  const answers = new Map<string, Profile | null>();
  names.forEach((name, index) => {
    const key = canonicalName(name);
    if (!answers.has(key)) answers.set(key, profiles[index] ?? null);
  });
  const body = batchDocument(answers);
  const headers = { ...rateLimitHeaders(rateLimit), 'Content-Type': JSON_CONTENT_TYPE };
  if (method === 'POST') {
    sendEncoded(req, res, body, { ...headers, ...NO_STORE });
    return;
  }
  sendValidated(req, res, {
    etag: batchEtag(answers),
    validators: { ...rateLimitHeaders(rateLimit), ...deps.edge.headers(request) },
    body,
    contentHeaders: { 'Content-Type': JSON_CONTENT_TYPE },
  });
}

function batchDocument(answers: ReadonlyMap<string, Profile | null>): Buffer {
  const parts: Buffer[] = [Buffer.from('{"profiles":{')];
  let first = true;
  for (const [name, profile] of answers) {
    parts.push(Buffer.from(`${first ? '' : ','}${JSON.stringify(name)}:`));
    parts.push(profile === null ? Buffer.from('null') : profile.document);
    first = false;
  }
  parts.push(Buffer.from('}}'));
  return Buffer.concat(parts);
}

/** A strong ETag of the answer: the names in order and the content hash of each profile. */
function batchEtag(answers: ReadonlyMap<string, Profile | null>): string {
  const hash = createHash('sha256');
  for (const [name, profile] of answers) hash.update(`${name}\n${profile?.contentHash ?? ''}\n`);
  return `"${hash.digest('base64url').slice(0, 27)}"`;
}

function invalidBatch(extra: Headers): Response {
  return {
    description:
      'No names, more than 100, an unreadable body, or an invalid name (then `name` is the first invalid one, as given).',
    headers: { ...EVERY, ...RATE_LIMIT, ...extra },
    content: jsonContent('InvalidInputError', { error: INVALID_NAME_MESSAGE, name: 'not-a-name' }),
  };
}

function byGetOperation(): Operation {
  return {
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
        headers: CACHEABLE,
        content: jsonContent('BatchResult'),
      },
      '304': notModified(),
      '400': invalidBatch({}),
      ...LOOKUP_ERRORS,
    },
  };
}

function byPostOperation(): Operation {
  const noStore = CACHING;
  return {
    operationId: 'profilesByPost',
    summary: 'Up to 100 profiles at once, names in a JSON body',
    description: 'As the GET form, for lists that do not fit a URL. Answers are not cached (`no-store`).',
    tags: ['Profiles'],
    requestBody: {
      required: true,
      description:
        'At most 64 KiB of `application/json` in UTF-8, also once decompressed when sent with `Content-Encoding` ' +
        '`gzip`, `deflate` or `br`.',
      content: { 'application/json': { schema: schemaRef('BatchRequest') } },
    },
    responses: {
      '200': {
        description: 'The profiles.',
        headers: { ...EVERY, ...noStore, ...RATE_LIMIT },
        content: jsonContent('BatchResult'),
      },
      '400': invalidBatch(noStore),
      '413': errorAnswer(
        'The body is over 64 KiB (once decompressed).',
        'Request body too large, the limit is 65536 bytes',
        noStore,
      ),
      '415': errorAnswer(
        'The body is not `application/json`, names a charset other than UTF-8, or is compressed otherwise than ' +
          'with gzip, deflate or br (or is not valid data of its coding).',
        'Expected application/json',
        noStore,
      ),
      '429': tooManyRequests(noStore),
      '500': internalError(noStore),
      '503': unavailable(noStore),
    },
  };
}
