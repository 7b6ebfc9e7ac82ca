/**
 * What the REST routes are built from: the services they call and the settings they read. The
 * composition root (src/app.ts) builds one; each route module receives it and imports nothing
 * back from the route list.
 */
import type { Config } from '../config/config.js';
import type { EdgeCaching } from '../edge/edge-caching.js';
import type { Logger } from '../logging/logger.js';
import type { AvatarService } from '../service/avatars.js';
import type { LiveUpdates } from '../service/live-updates.js';
import type { ProfilesService } from '../service/profiles-service.js';
import type { VCardService } from '../service/vcard.js';
import type { WebFingerService } from '../service/webfinger.js';
import type { WebhookBudget } from '../service/webhook-budget.js';
import type { WebhooksService } from '../service/webhooks.js';

export interface RestDependencies {
  profiles: ProfilesService;
  avatars: AvatarService;
  vcards: VCardService;
  webfinger: WebFingerService;
  live: LiveUpdates;
  webhooks: WebhooksService;
  /** What a webhooks API call needs (a key) and costs (a point of the key's profile budget). */
  webhookBudget: WebhookBudget;
  config: Config;
  /** The caching headers and tags of public answers (src/edge/edge-caching.ts). */
  edge: EdgeCaching;
  logger: Logger;
}
