/**
 * `GET /api/{name_id}/events`: live updates of one profile as Server-Sent Events, for browsers'
 * `EventSource` and other clients that are not GraphQL clients. After each change, once it is
 * visible to lookups: `event: profile` with exactly the `/api/{name_id}` document, or
 * `event: deleted` with `{"name": …}` when the name no longer has a profile. A comment every 15 s
 * keeps proxies from closing an idle stream. The name is validated, the profile budget drawn and
 * a subscription slot taken before the stream opens: 400 and 429 answer as for a lookup.
 */
import { EventStream } from '../http/event-stream.js';
import { sendError } from '../http/respond.js';
import { InvalidInputError } from '../service/errors.js';
import type { LiveSink, LiveSubscription, LiveUpdates, ProfileChangeEvent } from '../service/live-updates.js';
import {
  CACHING,
  EVERY,
  INVALID_NAME_ID,
  NAME_ID_PARAMETER,
  RATE_LIMIT,
  tooManyRequests,
} from './openapi-components.js';
import { rateLimitHeaders } from './rate-limit-headers.js';
import { GET_HEAD, type RestRoute } from './route.js';
import { type ServiceCall, serviceHandler } from './service-handler.js';

export const eventsRoute: RestRoute = {
  pattern: '/api/:name/events',
  methods: GET_HEAD,
  handler: (deps) => serviceHandler(deps, (call) => events(call, deps.live)),
  openApi: {
    pathParameters: { name: NAME_ID_PARAMETER },
    get: {
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
        '400': INVALID_NAME_ID,
        '429': tooManyRequests(),
      },
    },
  },
};

/** What the stream says of one change. */
function writeEvent(stream: EventStream, event: ProfileChangeEvent): boolean {
  if (event.profile === null) return stream.send('deleted', JSON.stringify({ name: event.name }));
  return stream.send('profile', event.profile.document);
}

async function events(call: ServiceCall, live: LiveUpdates): Promise<void> {
  const { req, res } = call;
  const stream = new EventStream(res);
  const subscription = await subscribe(call, live, stream);
  if (subscription === undefined) return;
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
}

/**
 * The subscription, or undefined when the name was invalid and the 400 is sent: the lookup's
 * body, without the batch's `name` detail. Other errors are the frame's to answer.
 */
async function subscribe(
  { req, res, params, request }: ServiceCall,
  live: LiveUpdates,
  stream: EventStream,
): Promise<LiveSubscription | undefined> {
  const sink: LiveSink = {
    push: (event) => writeEvent(stream, event),
    end: (reason) => (reason === 'dropped' ? stream.destroy() : stream.end()),
  };
  try {
    return await live.subscribe(request, [params.name ?? ''], 'rest', sink);
  } catch (error) {
    if (!(error instanceof InvalidInputError)) throw error;
    sendError(req, res, 400, error.message, rateLimitHeaders(error.rateLimit));
    return undefined;
  }
}
