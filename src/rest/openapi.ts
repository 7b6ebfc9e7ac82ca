/**
 * The OpenAPI 3.1 document of the REST surface, served at /api/openapi.json, assembled from the
 * route declarations: each route module describes its own path (see PathDescription in
 * route.ts), shared schemas and headers are in openapi-components.ts. Tests validate real answers
 * of every documented path, method and status against it (bodies and headers, HEAD included) and
 * lint it with Redocly's recommended rules.
 *
 * A small builder of our own rather than a library: what the document needs beyond plain objects
 * is this project's (paths from router patterns, HEAD twins, the router's 405), which neither
 * `openapi3-ts` (types and a setter-style builder) nor schema-first generators such as
 * `zod-to-openapi` (a zod rewrite of every schema) would write for us.
 */
import type { HTTPMethod } from 'find-my-way';
import { JSON_CONTENT_TYPE, sendBody } from '../http/respond.js';
import {
  API_KEY_IN_URL,
  EVERY,
  HEADERS,
  INVALID_API_KEY,
  KEY_REFUSED_CACHING,
  methodNotAllowed,
  type Operation,
  type Parameter,
  type Response,
  SCHEMAS,
  SECURITY_SCHEMES,
  tooManyRequests,
} from './openapi-components.js';
import { GET_HEAD, type PathDescription, type RestRoute } from './route.js';

interface PathItem {
  readonly parameters?: readonly Parameter[];
  readonly get?: Operation;
  readonly head?: Operation;
  readonly post?: Operation;
  readonly delete?: Operation;
}

/** `GET /api/openapi.json`: the document of itself and `routes`, written once at start-up. */
export function openApiRoute(routes: readonly RestRoute[]): RestRoute {
  const route: RestRoute = {
    pattern: '/api/openapi.json',
    methods: GET_HEAD,
    handler: (deps) => {
      const json = JSON.stringify(openApiDocument([route, ...routes], deps.config.publicUrl));
      return (req, res) => sendBody(req, res, 200, json, { 'Content-Type': JSON_CONTENT_TYPE });
    },
    openApi: {
      get: {
        operationId: 'openApiDocument',
        summary: 'This OpenAPI document',
        tags: ['Meta'],
        responses: {
          '200': {
            description: 'The OpenAPI 3.1 document.',
            headers: EVERY,
            content: { 'application/json': { schema: { type: 'object' } } },
          },
        },
      },
    },
  };
  return route;
}

/** The document of the described routes, in their order; `publicUrl` (PUBLIC_URL) is its one server. */
function openApiDocument(routes: readonly RestRoute[], publicUrl: string): Readonly<Record<string, unknown>> {
  const paths: Record<string, PathItem> = {};
  for (const route of routes) {
    if (route.openApi !== undefined) paths[documentPath(route, route.openApi)] = pathItem(route, route.openApi);
  }
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
    // Public data: a key is optional; it only changes whose budget a request draws on.
    security: [{}, { ApiKeyBearer: [] }, { ApiKeyHeader: [] }],
    tags: [
      { name: 'Profiles', description: 'Profiles of name IDs: one, many, or as a vCard.' },
      { name: 'Avatars', description: 'Avatar images, with a generated fallback.' },
      { name: 'Owner check', description: 'Whether an e-mail owns or created a name (rate-limited).' },
      { name: 'WebFinger', description: 'Discovery of name IDs as `acct:` URIs (RFC 7033).' },
      { name: 'Discovery', description: 'Prefix search, and reverse lookup by wallet address.' },
      { name: 'Change feed', description: 'What changed since a cursor: the change log, and its event stream.' },
      {
        name: 'Webhooks',
        description: "An API key's webhook endpoints: signed POSTs of every change they ask for (Standard Webhooks).",
      },
      { name: 'Meta', description: 'This description.' },
    ],
    paths,
    components: { schemas: SCHEMAS, headers: HEADERS, securitySchemes: SECURITY_SCHEMES },
  };
}

/** The router pattern in OpenAPI syntax: `/api/:name/avatar` → `/api/{name_id}/avatar`. */
function documentPath(route: RestRoute, description: PathDescription): string {
  return route.pattern.replace(/:(\w+)/g, (_, name: string) => {
    const parameter = description.pathParameters?.[name];
    if (parameter === undefined) throw new Error(`${route.pattern}: :${name} has no OpenAPI parameter`);
    return `{${parameter.name}}`;
  });
}

function pathItem(route: RestRoute, description: PathDescription): PathItem {
  checkEveryMethodDescribed(route, description);
  // The router answers every other method with 405 (src/http/router.ts); OpenAPI has no place
  // for "any other method", so each operation documents it. Every path checks API keys first
  // (src/http/api-key-guard.ts).
  const refusal = methodNotAllowed(listed(route.methods));
  const withRefusal = (operation: Operation): Operation => ({
    ...operation,
    responses: withKeyAnswers({ ...operation.responses, '405': refusal }),
  });
  const parameters = Object.values(description.pathParameters ?? {});
  const get = description.get && withRefusal(description.get);
  return {
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(get === undefined ? {} : { get }),
    ...(get !== undefined && route.methods.includes('HEAD') ? { head: headOf(get) } : {}),
    ...(description.post === undefined ? {} : { post: withRefusal(description.post) }),
    ...(description.delete === undefined ? {} : { delete: withRefusal(description.delete) }),
  };
}

/**
 * The API-key answers added to an operation's: 401 and 400 (or, where it has its own, a word on
 * it), and 429 (too many unknown keys from one address) where it has none.
 */
function withKeyAnswers(responses: Operation['responses']): Operation['responses'] {
  const own = responses['400'];
  const badRequest: Response =
    own === undefined
      ? API_KEY_IN_URL
      : {
          ...own,
          description: `${own.description} ${API_KEY_IN_URL.description}`,
          headers: { ...KEY_REFUSED_CACHING, ...own.headers },
        };
  const own401 = responses['401'];
  const unauthorized: Response =
    own401 === undefined
      ? INVALID_API_KEY
      : {
          ...INVALID_API_KEY,
          ...own401,
          description: `${own401.description} ${INVALID_API_KEY.description}`,
          headers: { ...INVALID_API_KEY.headers, ...own401.headers },
        };
  const own429 = responses['429'];
  const tooMany: Response =
    own429 === undefined
      ? tooManyRequests(KEY_REFUSED_CACHING)
      : { ...own429, headers: { ...KEY_REFUSED_CACHING, ...own429.headers } };
  return { ...responses, '400': badRequest, '401': unauthorized, '429': tooMany };
}

/** A method the route serves without an operation (or the reverse) fails at start-up, not in a client. */
function checkEveryMethodDescribed(route: RestRoute, description: PathDescription): void {
  const described: HTTPMethod[] = [
    ...(description.get === undefined ? [] : (['GET', 'HEAD'] as const)),
    ...(description.post === undefined ? [] : (['POST'] as const)),
    ...(description.delete === undefined ? [] : (['DELETE'] as const)),
  ];
  const served = [...route.methods].sort().join();
  if (served !== described.sort().join()) {
    throw new Error(`${route.pattern}: serves ${served}, its OpenAPI description ${described.join()}`);
  }
}

/** `GET and HEAD`, `GET, HEAD and POST`. */
function listed(methods: readonly HTTPMethod[]): string {
  return methods.length < 2 ? methods.join() : `${methods.slice(0, -1).join(', ')} and ${methods.at(-1)}`;
}

/**
 * The HEAD twin of a GET operation: the same answers and headers, no bodies. (The 405 keeps its
 * body: it is the answer to another method.)
 */
function headOf(get: Operation): Operation {
  return {
    ...get,
    operationId: `${get.operationId}Head`,
    summary: `${get.summary} (headers only)`,
    description: 'Answers exactly as GET does, without the body.',
    responses: Object.fromEntries(
      Object.entries(get.responses).map(([status, { content, ...rest }]): [string, Response] => [
        status,
        status === '405' ? { ...rest, content } : rest,
      ]),
    ),
  };
}
