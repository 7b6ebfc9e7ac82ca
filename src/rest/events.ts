/**
 * `GET /api/{name_id}/events`: live updates of one profile as Server-Sent Events, for browsers'
 * `EventSource` and other clients that are not GraphQL clients. After each change, once it is
 * visible to lookups: `event: profile` with exactly the `/api/{name_id}` document, or
 * `event: deleted` with `{"name": …}` when the name no longer has a profile. A comment every 15 s
 * keeps proxies from closing an idle stream. The name is validated, the profile budget drawn and
 * a subscription slot taken before the stream opens: 400 and 429 answer as for a lookup.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Config } from '../config/config.js';
import { EventStream } from '../http/event-stream.js';
import { sendError } from '../http/respond.js';
import type { Router } from '../http/router.js';
import { serviceRequestFor } from '../http/service-request.js';
import type { Logger } from '../ops/logger.js';
import { InvalidInputError } from '../service/errors.js';
import type { LiveSink, LiveUpdates, ProfileChangeEvent } from '../service/live-updates.js';
import { sendServiceError } from './error-responses.js';
import { rateLimitHeaders } from './rate-limit-headers.js';

export const EVENTS_PATH = '/api/:name/events';

export interface EventsDependencies {
  live: LiveUpdates;
  config: Config;
  logger: Logger;
}

export function registerEventsRoute(router: Router, deps: EventsDependencies): void {
  router.on(['GET', 'HEAD'], EVENTS_PATH, (req, res, params) => void events(req, res, deps, params.name ?? ''), {
    cors: true,
  });
}

/** What the stream says of one change. */
function writeEvent(stream: EventStream, event: ProfileChangeEvent): boolean {
  if (event.profile === null) return stream.send('deleted', JSON.stringify({ name: event.name }));
  return stream.send('profile', event.profile.document);
}

async function events(req: IncomingMessage, res: ServerResponse, deps: EventsDependencies, name: string) {
  const stream = new EventStream(res);
  const sink: LiveSink = {
    push: (event) => writeEvent(stream, event),
    end: (reason) => (reason === 'dropped' ? stream.destroy() : stream.end()),
  };
  try {
    const request = serviceRequestFor(req, res, deps.config.trustProxyHops);
    const subscription = await deps.live.subscribe(request, [name], 'rest', sink);
    // HEAD answers as GET would (budget and slot included), without a body: nothing to stream.
    if (res.destroyed || req.method === 'HEAD') {
      subscription.close(); // or the client left while it was being subscribed
      if (!res.destroyed) {
        stream.open(rateLimitHeaders(subscription.rateLimit));
        stream.end();
      }
      return;
    }
    res.once('close', () => subscription.close());
    stream.open(rateLimitHeaders(subscription.rateLimit));
  } catch (error) {
    // One name: the lookup's 400 body, without the batch's `name` detail.
    if (error instanceof InvalidInputError) sendError(req, res, 400, error.message, rateLimitHeaders(error.rateLimit));
    else sendServiceError(req, res, error, {}, deps.logger);
  }
}
