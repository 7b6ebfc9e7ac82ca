/**
 * The REST routes: the paths of the contract (`GET /api/{name_id}`, `GET /api/owner-check`, the
 * OpenAPI document) and the additions for apps that are not GraphQL clients (batch lookup,
 * avatar, vCard, live updates, WebFinger, discovery, the change feed, webhook endpoints). Each lives in a module of its own that reads
 * its parameters, calls the profiles service (the functions the GraphQL resolvers call) and
 * writes the contract's exact answer.
 */
import type { Router } from '../http/router.js';
import { avatarRoute } from './avatar.js';
import { batchRoute } from './batch.js';
import { changesRoute } from './changes.js';
import type { RestDependencies } from './dependencies.js';
import { searchRoute, walletRoute } from './discovery.js';
import { changeEventsRoute, eventsRoute } from './events.js';
import { unknownApiPathRoute } from './fallbacks.js';
import { openApiRoute } from './openapi.js';
import { ownerCheckRoute } from './owner-check.js';
import { profileRoute } from './profile.js';
import type { RestRoute } from './route.js';
import { vcardRoute } from './vcard.js';
import { webfingerRoute } from './webfinger.js';
import {
  webhookDeliveriesRoute,
  webhookEnableRoute,
  webhookReplayRoute,
  webhookRotateSecretRoute,
  webhookRoute,
  webhooksRoute,
} from './webhooks.js';

/** The paths of the OpenAPI document, in its order (after the document itself). */
const DOCUMENTED: readonly RestRoute[] = [
  ownerCheckRoute,
  batchRoute,
  profileRoute,
  avatarRoute,
  vcardRoute,
  eventsRoute,
  webfingerRoute,
  searchRoute,
  walletRoute,
  changesRoute,
  changeEventsRoute,
  webhooksRoute,
  webhookRoute,
  webhookEnableRoute,
  webhookRotateSecretRoute,
  webhookDeliveriesRoute,
  webhookReplayRoute,
];

const ROUTES: readonly RestRoute[] = [openApiRoute(DOCUMENTED), ...DOCUMENTED, unknownApiPathRoute];

/** Every route is open to browsers of any origin (the CORS policy of src/http/cors.ts). */
export function registerRestRoutes(router: Router, deps: RestDependencies): void {
  for (const route of ROUTES) router.on(route.methods, route.pattern, route.handler(deps), { cors: true });
}
