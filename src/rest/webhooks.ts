/**
 * The webhook endpoints of an API key (docs/webhooks.md): `/api/webhooks` to make and list them,
 * `/api/webhooks/{id}` to read and delete one, and its `enable`, `rotate-secret`, `deliveries`
 * and `replay`. Every call needs a key and sees only that key's endpoints (src/service/webhooks.ts);
 * a secret is in the answers of `POST /api/webhooks` and `rotate-secret` only.
 *
 * Each call, in this order: the key is required (401, nothing drawn), a JSON body is read where
 * the call takes one (415, 413 and 400 for its form, nothing drawn, as for the batch lookup's
 * POST), one point of the key's profile budget is drawn (429), then the service answers. Every
 * answer is `Cache-Control: no-store`: it is one key's business and changes with every call.
 */
import type { OutgoingHttpHeaders } from 'node:http';
import { type JsonObject, readJsonObject } from '../http/json-body.js';
import { requestBodyTooLargeMessage } from '../http/request-body.js';
import { sendJson } from '../http/respond.js';
import type { RouteHandler } from '../http/router.js';
import { InvalidInputError } from '../service/errors.js';
import {
  API_KEY_REQUIRED_MESSAGE,
  MAX_WEBHOOK_NAMES,
  MAX_WEBHOOKS_PER_KEY,
  TOO_MANY_WEBHOOKS_MESSAGE,
  WEBHOOK_NOT_FOUND_MESSAGE,
  type Webhook,
  type WebhookDelivery,
  type WebhookInput,
} from '../service/webhooks.js';
import type { RestDependencies } from './dependencies.js';
import { sendServiceError } from './error-responses.js';
import {
  EVERY,
  errorAnswer,
  type Headers,
  headers,
  internalError,
  jsonContent,
  type Operation,
  type Parameter,
  RATE_LIMIT,
  type Response,
  type Responses,
  schemaRef,
  tooManyRequests,
  unavailable,
} from './openapi-components.js';
import { queryOf } from './query.js';
import { rateLimitHeaders } from './rate-limit-headers.js';
import { GET_HEAD, type RestRoute } from './route.js';
import { type ServiceCall, serviceHandler } from './service-handler.js';

/** A thousand names of the longest kind do not fit, but a thousand of any usual length do. */
const MAX_WEBHOOK_BODY_BYTES = 64 * 1024;
const DEFAULT_DELIVERIES = 20;
const MAX_DELIVERIES = 100;

const NO_STORE = { 'Cache-Control': 'no-store' } as const;

/** The fields of each body; any other is refused, so that a misspelt `events` is not "every event". */
const CREATE_FIELDS = ['url', 'names', 'namespaces', 'events', 'description'] as const;
const REPLAY_FIELDS = ['after'] as const;

/** What a call answers when it succeeds; errors are thrown (src/rest/error-responses.ts). */
interface Answer {
  status: 200 | 201 | 202 | 204;
  body?: unknown;
  headers?: OutgoingHttpHeaders;
}

interface WebhookCall extends ServiceCall {
  /** The body's object, for a call that takes one (`body` set); else empty. */
  readonly body: JsonObject;
}

/** The frame of every webhook call: key, body, budget, then `answer`, every answer `no-store`. */
function webhookHandler(
  deps: RestDependencies,
  answer: (call: WebhookCall) => Promise<Answer>,
  options: { body?: readonly string[] } = {},
): RouteHandler {
  return serviceHandler(
    deps,
    async (call) => {
      const { req, res, request } = call;
      deps.webhookBudget.requireKey(request);
      let body: JsonObject = {};
      if (options.body !== undefined) {
        const read = await readJsonObject(req, res, MAX_WEBHOOK_BODY_BYTES, NO_STORE);
        if (read === undefined) return;
        body = read;
      }
      const rateLimit = await deps.webhookBudget.draw(request);
      const headers = { ...NO_STORE, ...rateLimitHeaders(rateLimit) };
      let result: Answer;
      try {
        if (options.body !== undefined) refuseUnknownFields(body, options.body);
        result = await answer({ ...call, body });
      } catch (error) {
        sendServiceError(req, res, error, headers, deps.logger);
        return;
      }
      if (result.status === 204) {
        res.writeHead(204, { ...headers, ...result.headers });
        res.end();
      } else sendJson(req, res, result.status, result.body, { ...headers, ...result.headers });
    },
    { errorHeaders: () => NO_STORE },
  );
}

function refuseUnknownFields(body: JsonObject, fields: readonly string[]): void {
  const unknown = Object.keys(body).find((key) => !fields.includes(key));
  if (unknown !== undefined) {
    throw new InvalidInputError(
      `Unknown field ${JSON.stringify(unknown.slice(0, 100))}, expected ${fields.join(', ')}`,
    );
  }
}

/** The contract's shape, in its key order; `secret` only when just made or rotated. */
function webhookDocument(webhook: Webhook, secret?: string): Record<string, unknown> {
  return {
    id: webhook.id,
    url: webhook.url,
    names: webhook.names,
    namespaces: webhook.namespaces,
    events: webhook.events,
    description: webhook.description,
    status: webhook.status,
    disabledReason: webhook.disabledReason,
    ...(secret === undefined ? {} : { secret }),
    createdAt: webhook.createdAt.toISOString(),
  };
}

function deliveryDocument(delivery: WebhookDelivery): Record<string, unknown> {
  return {
    eventId: delivery.eventId,
    type: delivery.type,
    name: delivery.name,
    attempt: delivery.attempt,
    at: delivery.at.toISOString(),
    status: delivery.status,
    durationMs: delivery.durationMs,
    error: delivery.error,
    nextAttemptAt: delivery.nextAttemptAt?.toISOString() ?? null,
  };
}

const idOf = (call: ServiceCall): string => call.params.id ?? '';

/**
 * `limit` as a number for the service to check; NaN (refused there) when it is not digits or is
 * given twice; undefined when absent or empty (the default).
 */
function deliveriesLimit(query: URLSearchParams): number | undefined {
  const values = query.getAll('limit');
  if (values.length === 0 || (values.length === 1 && values[0] === '')) return undefined;
  const [value] = values;
  return values.length === 1 && value !== undefined && /^[0-9]{1,6}$/.test(value) ? Number(value) : Number.NaN;
}

// The OpenAPI descriptions.

function idParameter(): Parameter {
  return {
    name: 'id',
    in: 'path',
    required: true,
    description: "The endpoint's id, as `POST /api/webhooks` answered it.",
    schema: { type: 'string', maxLength: 64 },
    example: 'wh_3kTMd9dVbWx8sQ2pL0aZrY1c',
  };
}

/** A key is required: either header. */
const KEY_REQUIRED = [{ ApiKeyBearer: [] }, { ApiKeyHeader: [] }] as const;
const ANSWER_HEADERS: Headers = { ...EVERY, ...headers('Cache-Control'), ...RATE_LIMIT };
const ERROR_HEADERS: Headers = { ...headers('Cache-Control'), ...RATE_LIMIT };

const answer = (description: string, schema: string): Response => ({
  description,
  headers: ANSWER_HEADERS,
  content: jsonContent(schema),
});

/** The answers every webhook call may give besides its own. */
function commonAnswers(): Responses {
  // The database may fail while the API key is checked, before the route's own headers.
  const failure: Headers = { 'Cache-Control': { $ref: '#/components/headers/Cache-Control-Keyed-Failure' } };
  return {
    '401': errorAnswer('No API key: webhook endpoints belong to API keys.', API_KEY_REQUIRED_MESSAGE, {
      ...headers('WWW-Authenticate', 'Cache-Control'),
    }),
    '429': tooManyRequests(headers('Cache-Control')),
    '500': internalError(failure),
    '503': unavailable(failure),
  };
}

const NOT_FOUND = (): Response =>
  errorAnswer('No endpoint of this API key has this id.', WEBHOOK_NOT_FOUND_MESSAGE, ERROR_HEADERS);

function bodyAnswers(): Responses {
  return {
    '413': errorAnswer(
      'The body is over 64 KiB (once decompressed).',
      requestBodyTooLargeMessage(MAX_WEBHOOK_BODY_BYTES),
      headers('Cache-Control'),
    ),
    '415': errorAnswer(
      'The body is not `application/json`, names a charset other than UTF-8, or is compressed otherwise than ' +
        'with gzip, deflate or br (or is not valid data of its coding).',
      'Expected application/json',
      headers('Cache-Control'),
    ),
  };
}

const BODY_DESCRIPTION =
  'At most 64 KiB of `application/json` in UTF-8, also once decompressed when sent with `Content-Encoding` ' +
  '`gzip`, `deflate` or `br`. A field not described here is refused (400).';

const COST = 'One point of the profile budget of the API key.';

function listOperation(): Operation {
  return {
    operationId: 'webhooks',
    summary: "The API key's webhook endpoints",
    description: `Oldest first, without their secrets. ${COST}`,
    tags: ['Webhooks'],
    security: KEY_REQUIRED,
    responses: { '200': answer('The endpoints.', 'WebhookList'), ...commonAnswers() },
  };
}

function createOperation(): Operation {
  return {
    operationId: 'createWebhook',
    summary: 'A new webhook endpoint',
    description:
      'Deliveries start with the changes committed after it is made. Without `names` and `namespaces` it gets ' +
      `every change. At most ${MAX_WEBHOOKS_PER_KEY} endpoints per API key. The answer holds the signing secret, ` +
      `shown only here and by \`rotate-secret\`. ${COST}`,
    tags: ['Webhooks'],
    security: KEY_REQUIRED,
    requestBody: {
      required: true,
      description: BODY_DESCRIPTION,
      content: {
        'application/json': {
          schema: schemaRef('WebhookRequest'),
          example: {
            url: 'https://app.example/hooks/names',
            namespaces: ['me'],
            events: ['profile.updated', 'profile.removed'],
            description: 'Search index',
          },
        },
      },
    },
    responses: {
      '201': {
        description: 'The endpoint, with its secret.',
        headers: { ...ANSWER_HEADERS, Location: { $ref: '#/components/headers/Location-Webhook' } },
        content: jsonContent('WebhookWithSecret'),
      },
      '400': {
        description:
          'A body that is not a JSON object, a field not described, or a field that breaks its rule: no `url`, a ' +
          '`url` that is not `https` (`http` only to networks `WEBHOOK_PRIVATE_ORIGINS` lists), longer than 2048, ' +
          'with credentials, or whose host resolves to an address the service may not reach; an invalid name ' +
          `(then \`name\` is the first invalid one, as given) or namespace, more than ${MAX_WEBHOOK_NAMES} names; ` +
          'an unknown event type.',
        headers: { ...EVERY, ...ERROR_HEADERS },
        content: jsonContent('InvalidInputError', { error: 'The url is refused: address 169.254.169.254 refused' }),
      },
      '409': errorAnswer(
        `The API key has ${MAX_WEBHOOKS_PER_KEY} endpoints already.`,
        TOO_MANY_WEBHOOKS_MESSAGE,
        ERROR_HEADERS,
      ),
      ...bodyAnswers(),
      ...commonAnswers(),
    },
  };
}

function getOperation(): Operation {
  return {
    operationId: 'webhook',
    summary: 'One webhook endpoint',
    description: `Without its secret. ${COST}`,
    tags: ['Webhooks'],
    security: KEY_REQUIRED,
    responses: { '200': answer('The endpoint.', 'Webhook'), '404': NOT_FOUND(), ...commonAnswers() },
  };
}

function deleteOperation(): Operation {
  return {
    operationId: 'deleteWebhook',
    summary: 'Deletes a webhook endpoint',
    description: `With its waiting events and its deliveries log; nothing more is delivered to it. ${COST}`,
    tags: ['Webhooks'],
    security: KEY_REQUIRED,
    responses: {
      '204': { description: 'Deleted. No body.', headers: ANSWER_HEADERS },
      '404': NOT_FOUND(),
      ...commonAnswers(),
    },
  };
}

function enableOperation(): Operation {
  return {
    operationId: 'enableWebhook',
    summary: 'Enables a disabled webhook endpoint',
    description:
      'Deliveries go on from where they stopped: what changed meanwhile is delivered, the latest state per name. ' +
      `Its failures are forgotten. An active endpoint stays as it is. No body is read. ${COST}`,
    tags: ['Webhooks'],
    security: KEY_REQUIRED,
    responses: { '200': answer('The endpoint, active.', 'Webhook'), '404': NOT_FOUND(), ...commonAnswers() },
  };
}

function rotateOperation(): Operation {
  return {
    operationId: 'rotateWebhookSecret',
    summary: 'A new signing secret',
    description:
      'The previous secret keeps signing beside the new one for 24 hours (`webhook-signature` then carries both ' +
      `signatures), so that a receiver can switch without losing a delivery. No body is read. ${COST}`,
    tags: ['Webhooks'],
    security: KEY_REQUIRED,
    responses: {
      '200': answer('The endpoint, with its new secret.', 'WebhookWithSecret'),
      '404': NOT_FOUND(),
      ...commonAnswers(),
    },
  };
}

function deliveriesOperation(): Operation {
  return {
    operationId: 'webhookDeliveries',
    summary: "The endpoint's latest delivery attempts",
    description: `Newest first; the latest 1000 attempts are kept. ${COST}`,
    tags: ['Webhooks'],
    security: KEY_REQUIRED,
    parameters: [
      {
        name: 'limit',
        in: 'query',
        required: false,
        description: `Attempts, 1 to ${MAX_DELIVERIES} (default ${DEFAULT_DELIVERIES}).`,
        schema: { type: 'integer', minimum: 1, maximum: MAX_DELIVERIES, default: DEFAULT_DELIVERIES },
      },
    ],
    responses: {
      '200': answer('The attempts.', 'WebhookDeliveries'),
      '400': errorAnswer('An invalid `limit`.', 'Invalid limit, expected an integer from 1 to 100', ERROR_HEADERS),
      '404': NOT_FOUND(),
      ...commonAnswers(),
    },
  };
}

function replayOperation(): Operation {
  return {
    operationId: 'replayWebhook',
    summary: 'Delivers every matching change after a cursor again',
    description:
      'As the change log still has it (`CHANGE_LOG_RETENTION_DAYS`), with new event ids and the latest state per ' +
      'name. A disabled endpoint gets them once it is enabled again. ' +
      COST,
    tags: ['Webhooks'],
    security: KEY_REQUIRED,
    requestBody: {
      required: true,
      description: BODY_DESCRIPTION,
      content: { 'application/json': { schema: schemaRef('ReplayRequest'), example: { after: 'Y2wxOjE6MQ' } } },
    },
    responses: {
      '202': answer('Accepted: the changes are queued for delivery. The endpoint as it is.', 'Webhook'),
      '400': errorAnswer(
        'A body that is not a JSON object, a field not described, no `after`, or an invalid cursor (`now` too).',
        'Invalid cursor',
        ERROR_HEADERS,
      ),
      '404': NOT_FOUND(),
      '410': errorAnswer(
        'The cursor is older than the change log keeps: its entries were pruned.',
        'Cursor is older than the change log keeps',
        ERROR_HEADERS,
      ),
      ...bodyAnswers(),
      ...commonAnswers(),
    },
  };
}

// The routes, after the constants their descriptions use.

export const webhooksRoute: RestRoute = {
  pattern: '/api/webhooks',
  methods: ['GET', 'HEAD', 'POST'],
  handler: (deps) => {
    const list = webhookHandler(deps, async ({ request }) => {
      const webhooks = await deps.webhooks.list(request);
      return { status: 200, body: { webhooks: webhooks.map((webhook) => webhookDocument(webhook)) } };
    });
    const create = webhookHandler(
      deps,
      async ({ request, body }) => {
        const created = await deps.webhooks.create(request, body as WebhookInput);
        return {
          status: 201,
          body: webhookDocument(created, created.secret),
          headers: { Location: `${deps.config.publicUrl}/api/webhooks/${created.id}` },
        };
      },
      { body: CREATE_FIELDS },
    );
    return (req, res, params) => (req.method === 'POST' ? create : list)(req, res, params);
  },
  openApi: { get: listOperation(), post: createOperation() },
};

export const webhookRoute: RestRoute = {
  pattern: '/api/webhooks/:id',
  methods: ['GET', 'HEAD', 'DELETE'],
  handler: (deps) => {
    const get = webhookHandler(deps, async (call) => ({
      status: 200,
      body: webhookDocument(await deps.webhooks.get(call.request, idOf(call))),
    }));
    const remove = webhookHandler(deps, async (call) => {
      await deps.webhooks.remove(call.request, idOf(call));
      return { status: 204 };
    });
    return (req, res, params) => (req.method === 'DELETE' ? remove : get)(req, res, params);
  },
  openApi: { pathParameters: { id: idParameter() }, get: getOperation(), delete: deleteOperation() },
};

export const webhookEnableRoute: RestRoute = {
  pattern: '/api/webhooks/:id/enable',
  methods: ['POST'],
  handler: (deps) =>
    webhookHandler(deps, async (call) => ({
      status: 200,
      body: webhookDocument(await deps.webhooks.enable(call.request, idOf(call))),
    })),
  openApi: { pathParameters: { id: idParameter() }, post: enableOperation() },
};

export const webhookRotateSecretRoute: RestRoute = {
  pattern: '/api/webhooks/:id/rotate-secret',
  methods: ['POST'],
  handler: (deps) =>
    webhookHandler(deps, async (call) => {
      const rotated = await deps.webhooks.rotateSecret(call.request, idOf(call));
      return { status: 200, body: webhookDocument(rotated, rotated.secret) };
    }),
  openApi: { pathParameters: { id: idParameter() }, post: rotateOperation() },
};

export const webhookDeliveriesRoute: RestRoute = {
  pattern: '/api/webhooks/:id/deliveries',
  methods: GET_HEAD,
  handler: (deps) =>
    webhookHandler(deps, async (call) => {
      const deliveries = await deps.webhooks.deliveries(call.request, idOf(call), deliveriesLimit(queryOf(call.req)));
      return { status: 200, body: { deliveries: deliveries.map(deliveryDocument) } };
    }),
  openApi: { pathParameters: { id: idParameter() }, get: deliveriesOperation() },
};

export const webhookReplayRoute: RestRoute = {
  pattern: '/api/webhooks/:id/replay',
  methods: ['POST'],
  handler: (deps) =>
    webhookHandler(
      deps,
      async (call) => {
        await deps.webhooks.replay(call.request, idOf(call), call.body.after);
        return { status: 202, body: webhookDocument(await deps.webhooks.get(call.request, idOf(call))) };
      },
      { body: REPLAY_FIELDS },
    ),
  openApi: { pathParameters: { id: idParameter() }, post: replayOperation() },
};
