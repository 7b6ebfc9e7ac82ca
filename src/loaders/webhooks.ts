/**
 * The webhook endpoints' rows for the service (src/service/webhooks.ts): each call one read or
 * write on the primary, with the request path's gate and deadline (src/db/webhook-queries.ts).
 */
import { comparePositions, type LogPosition, prunedThrough } from '../db/change-log.js';
import {
  type DeliveryRow,
  deleteEndpoint,
  type EndpointRow,
  type EndpointStatus,
  findEndpoint,
  insertEndpoint,
  listDeliveries,
  listEndpoints,
  type NewEndpoint,
  replayFrom,
  rotateSecret,
  setEndpointStatus,
} from '../db/webhook-queries.js';
import type { ServiceDatabase } from './loaders.js';

export type { EndpointRow };

export interface WebhookReads {
  insert(endpoint: NewEndpoint, maxPerKey: number): Promise<EndpointRow | 'too-many'>;
  list(apiKeyId: string): Promise<EndpointRow[]>;
  find(apiKeyId: string, id: string): Promise<EndpointRow | undefined>;
  remove(apiKeyId: string, id: string): Promise<boolean>;
  setStatus(apiKeyId: string, id: string, status: EndpointStatus): Promise<EndpointRow | undefined>;
  rotate(apiKeyId: string, id: string, stored: string, previousUntil: Date): Promise<EndpointRow | undefined>;
  deliveries(endpointId: string, limit: number): Promise<DeliveryRow[]>;
  /** Whether the change log no longer keeps the entries after `position`. */
  expired(position: LogPosition): Promise<boolean>;
  replay(apiKeyId: string, id: string, after: LogPosition): Promise<boolean>;
}

export function webhookReads(database: ServiceDatabase): WebhookReads {
  return {
    insert: (endpoint, maxPerKey) => database.writePrimary((db) => insertEndpoint(db, endpoint, maxPerKey)),
    list: (apiKeyId) => database.readPrimary((db) => listEndpoints(db, apiKeyId)),
    find: (apiKeyId, id) => database.readPrimary((db) => findEndpoint(db, apiKeyId, id)),
    remove: (apiKeyId, id) => database.writePrimary((db) => deleteEndpoint(db, apiKeyId, id)),
    setStatus: (apiKeyId, id, status) => database.writePrimary((db) => setEndpointStatus(db, apiKeyId, id, status)),
    rotate: (apiKeyId, id, stored, previousUntil) =>
      database.writePrimary((db) => rotateSecret(db, apiKeyId, id, stored, previousUntil)),
    deliveries: (endpointId, limit) => database.readPrimary((db) => listDeliveries(db, endpointId, limit)),
    expired: async (position) => comparePositions(position, await database.readPrimary((db) => prunedThrough(db))) < 0,
    replay: (apiKeyId, id, after) => database.writePrimary((db) => replayFrom(db, apiKeyId, id, after)),
  };
}
