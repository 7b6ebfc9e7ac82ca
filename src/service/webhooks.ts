/**
 * Webhook endpoints of API keys (docs/webhooks.md, the contract's "Webhooks"): made, listed,
 * enabled, rotated, replayed and removed by the key that owns them; another key's endpoint is
 * "not found". The REST routes (src/rest/webhooks.ts) call these functions; operators reach the
 * same rows through `npm run webhooks`.
 *
 * Input is checked before anything is written: the URL by the outbound guard (https, or http to
 * a network WEBHOOK_PRIVATE_ORIGINS allows; no credentials; every address its host resolves to one
 * the avatar fetch may reach too), names and namespaces as everywhere, the event types by name.
 */
import { randomBytes } from 'node:crypto';
import type { RateLimitDecision } from '../limits/rate-limit.js';
import type { LogPosition } from '../loaders/change-log.js';
import type { EndpointRow, WebhookReads } from '../loaders/webhooks.js';
import { parseNameId, parseNamespace } from '../names/name-id.js';
import { decodeChangeCursor } from './change-cursors.js';
import { INVALID_CHANGE_CURSOR_MESSAGE } from './changes.js';
import { CursorExpiredError, InvalidInputError, ServiceError } from './errors.js';
import { canonicalNames } from './name-lists.js';
import type { ServiceRequest } from './request.js';

export const MAX_WEBHOOKS_PER_KEY = 10;
export const MAX_WEBHOOK_NAMES = 1000;
export const MAX_WEBHOOK_NAMESPACES = 100;
export const MAX_WEBHOOK_URL_LENGTH = 2048;
export const MAX_DESCRIPTION_LENGTH = 500;
/** How long a rotated secret keeps signing beside the new one. */
const PREVIOUS_SECRET_SIGNS_MS = 24 * 60 * 60 * 1000;

export const API_KEY_REQUIRED_MESSAGE = 'An API key is required';
export const WEBHOOK_NOT_FOUND_MESSAGE = 'Webhook not found';
export const TOO_MANY_WEBHOOKS_MESSAGE = `At most ${MAX_WEBHOOKS_PER_KEY} webhooks per API key`;

export const EVENT_TYPES = ['profile.created', 'profile.updated', 'profile.removed'] as const;
type EventType = (typeof EVENT_TYPES)[number];
const EVENT_BITS: Readonly<Record<EventType, number>> = {
  'profile.created': 1,
  'profile.updated': 2,
  'profile.removed': 4,
};

/** The request has no API key: endpoints belong to keys (401). */
export class ApiKeyRequiredError extends ServiceError {
  override readonly name = 'ApiKeyRequiredError';
  constructor() {
    super(API_KEY_REQUIRED_MESSAGE, undefined);
  }
}

/** No endpoint of this key has that id (404). */
export class WebhookNotFoundError extends ServiceError {
  override readonly name = 'WebhookNotFoundError';
  constructor() {
    super(WEBHOOK_NOT_FOUND_MESSAGE, undefined);
  }
}

/** The key has as many endpoints as allowed (409). */
export class TooManyWebhooksError extends ServiceError {
  override readonly name = 'TooManyWebhooksError';
  constructor() {
    super(TOO_MANY_WEBHOOKS_MESSAGE, undefined);
  }
}

export interface WebhookInput {
  url?: unknown;
  names?: unknown;
  namespaces?: unknown;
  events?: unknown;
  description?: unknown;
}

/** An endpoint as its owner sees it: never its secret, but when it was just made or rotated. */
export interface Webhook {
  id: string;
  url: string;
  names: string[];
  namespaces: string[];
  events: EventType[];
  description: string | null;
  status: 'active' | 'disabled';
  /** Why it was disabled; null while active. */
  disabledReason: string | null;
  createdAt: Date;
}

export interface WebhookDelivery {
  eventId: string;
  type: EventType;
  name: string;
  attempt: number;
  at: Date;
  status: number | null;
  durationMs: number;
  error: string | null;
  nextAttemptAt: Date | null;
}

/** Checks a webhook URL before it is kept and before each delivery: the reason it is refused, or undefined. */
type UrlCheck = (url: string) => Promise<string | undefined>;

export interface WebhooksDeps {
  reads: WebhookReads;
  checkUrl: UrlCheck;
  /** Seals a new secret for storage and shows it (src/webhooks/secrets.ts). */
  newSecret(endpointId: string): { stored: string; shown: string };
  /** Something is due now (a new endpoint, enabled again, replayed): the dispatcher passes. */
  wake(): void;
  now?: () => number;
}

export interface WebhooksService {
  create(request: ServiceRequest, input: WebhookInput): Promise<Webhook & { secret: string }>;
  list(request: ServiceRequest): Promise<Webhook[]>;
  get(request: ServiceRequest, id: string): Promise<Webhook>;
  remove(request: ServiceRequest, id: string): Promise<void>;
  enable(request: ServiceRequest, id: string): Promise<Webhook>;
  rotateSecret(request: ServiceRequest, id: string): Promise<Webhook & { secret: string }>;
  deliveries(request: ServiceRequest, id: string, limit: unknown): Promise<WebhookDelivery[]>;
  replay(request: ServiceRequest, id: string, after: unknown): Promise<void>;
}

const TYPE_OF_KIND: Readonly<Record<number, EventType>> = {
  1: 'profile.created',
  2: 'profile.updated',
  3: 'profile.removed',
};

function webhookOf(row: EndpointRow): Webhook {
  return {
    id: row.id,
    url: row.url,
    names: row.names,
    namespaces: row.namespaces,
    events: EVENT_TYPES.filter((type) => (row.events & EVENT_BITS[type]) !== 0),
    description: row.description,
    status: row.status,
    disabledReason: row.disabledReason,
    createdAt: row.createdAt,
  };
}

/** `wh_` and 24 base62 characters. */
function newEndpointId(): string {
  const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
  const bytes = randomBytes(24);
  return `wh_${[...bytes].map((byte) => alphabet[byte % 62]).join('')}`;
}

const bad = (message: string, rateLimit?: RateLimitDecision) => new InvalidInputError(message, rateLimit);

interface CheckedInput {
  url: string;
  names: string[];
  namespaces: string[];
  events: number;
  description: string | null;
}

/**
 * Text the database can store as it was given: PostgreSQL's text holds no U+0000, and a lone
 * surrogate (which a JSON `\u` escape can write) would be stored as U+FFFD.
 */
const storable = (text: string): boolean => !text.includes('\u0000') && text.isWellFormed();

async function checkInput(input: WebhookInput, checkUrl: UrlCheck): Promise<CheckedInput> {
  if (typeof input.url !== 'string' || input.url === '') throw bad('The url is required, a string');
  if (input.url.length > MAX_WEBHOOK_URL_LENGTH)
    throw bad(`The url is longer than ${MAX_WEBHOOK_URL_LENGTH} characters`);
  if (!storable(input.url)) throw bad('The url holds U+0000 or a lone surrogate');
  const names = stringList(input.names, 'names', MAX_WEBHOOK_NAMES);
  const namespaces = stringList(input.namespaces, 'namespaces', MAX_WEBHOOK_NAMESPACES);
  const canonical = canonicalNames(
    names,
    names.map((name) => parseNameId(name)),
    undefined,
  );
  const spaces = namespaces.map((namespace) => {
    const parsed = parseNamespace(namespace);
    if (parsed === null)
      throw new InvalidInputError(`Invalid namespace: ${JSON.stringify(namespace)}`, undefined, { namespace });
    return parsed;
  });
  const events = input.events === undefined ? [...EVENT_TYPES] : stringList(input.events, 'events', EVENT_TYPES.length);
  const unknown = events.find((type) => !(EVENT_TYPES as readonly string[]).includes(type));
  if (unknown !== undefined) {
    throw bad(`Unknown event type ${JSON.stringify(unknown)}, expected ${EVENT_TYPES.join(', ')}`);
  }
  if (events.length === 0) throw bad(`At least one event type is required: ${EVENT_TYPES.join(', ')}`);
  const description = input.description ?? null;
  if (description !== null && (typeof description !== 'string' || description.length > MAX_DESCRIPTION_LENGTH)) {
    throw bad(`The description must be a string of at most ${MAX_DESCRIPTION_LENGTH} characters`);
  }
  if (description !== null && !storable(description)) throw bad('The description holds U+0000 or a lone surrogate');
  const refused = await checkUrl(input.url);
  if (refused !== undefined) throw bad(refused);
  return {
    url: input.url,
    names: [...new Set(canonical)],
    namespaces: [...new Set(spaces)],
    events: events.reduce((mask, type) => mask | EVENT_BITS[type as EventType], 0),
    description,
  };
}

function stringList(value: unknown, field: string, max: number): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) {
    throw bad(`The ${field} must be an array of strings`);
  }
  if (value.length > max) throw bad(`At most ${max} ${field}`);
  return value as string[];
}

export function createWebhooks(deps: WebhooksDeps): WebhooksService {
  const { reads } = deps;
  const now = deps.now ?? Date.now;
  const keyOf = (request: ServiceRequest): string => {
    const id = request.apiKey?.id;
    if (id === undefined) throw new ApiKeyRequiredError();
    return id;
  };
  const owned = async (request: ServiceRequest, id: string): Promise<EndpointRow> => {
    const row = await reads.find(keyOf(request), id);
    if (row === undefined) throw new WebhookNotFoundError();
    return row;
  };

  return {
    async create(request, input) {
      const apiKeyId = keyOf(request);
      const checked = await checkInput(input, deps.checkUrl);
      const id = newEndpointId();
      const secret = deps.newSecret(id);
      const created = await reads.insert({ id, apiKeyId, ...checked, secret: secret.stored }, MAX_WEBHOOKS_PER_KEY);
      if (created === 'too-many') throw new TooManyWebhooksError();
      deps.wake();
      return { ...webhookOf(created), secret: secret.shown };
    },

    async list(request) {
      return (await reads.list(keyOf(request))).map(webhookOf);
    },

    async get(request, id) {
      return webhookOf(await owned(request, id));
    },

    async remove(request, id) {
      if (!(await reads.remove(keyOf(request), id))) throw new WebhookNotFoundError();
    },

    async enable(request, id) {
      await owned(request, id);
      const enabled = await reads.setStatus(keyOf(request), id, 'active');
      if (enabled === undefined) throw new WebhookNotFoundError();
      deps.wake();
      return webhookOf(enabled);
    },

    async rotateSecret(request, id) {
      await owned(request, id);
      const secret = deps.newSecret(id);
      const rotated = await reads.rotate(keyOf(request), id, secret.stored, new Date(now() + PREVIOUS_SECRET_SIGNS_MS));
      if (rotated === undefined) throw new WebhookNotFoundError();
      return { ...webhookOf(rotated), secret: secret.shown };
    },

    async deliveries(request, id, limit) {
      const size = limit === undefined ? 20 : Number(limit);
      if (!Number.isInteger(size) || size < 1 || size > 100) {
        throw bad('Invalid limit, expected an integer from 1 to 100');
      }
      const endpoint = await owned(request, id);
      return (await reads.deliveries(endpoint.id, size)).map((row) => ({
        eventId: row.eventId,
        type: TYPE_OF_KIND[row.kind] ?? 'profile.updated',
        name: row.name,
        attempt: row.attempt,
        at: row.at,
        status: row.status,
        durationMs: row.durationMs,
        error: row.error,
        nextAttemptAt: row.nextAttemptAt,
      }));
    },

    async replay(request, id, after) {
      await owned(request, id);
      if (typeof after !== 'string') throw bad('The after cursor is required, a string');
      const decoded = decodeChangeCursor(after);
      if (decoded === undefined || decoded === 'now') throw bad(INVALID_CHANGE_CURSOR_MESSAGE);
      const position: LogPosition = decoded;
      if (await reads.expired(position)) throw new CursorExpiredError();
      await reads.replay(keyOf(request), id, position);
      deps.wake();
    },
  };
}
