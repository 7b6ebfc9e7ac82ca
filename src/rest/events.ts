/**
 * Live updates as Server-Sent Events, for browsers' `EventSource` and other clients that are not
 * GraphQL clients:
 *
 * - `GET /api/{name_id}/events`: one profile;
 * - `GET /api/changes/events?names=a@x,b@y` (1 to 100 names) or `?namespace=x`: many names, or
 *   every name of a namespace, in one stream.
 *
 * After each change, once it is visible to lookups: `event: profile` with exactly the
 * `/api/{name_id}` document, or `event: deleted` with `{"name": …}` when the name no longer has a
 * profile, each with `id:` the change's cursor. A client that reconnects with `Last-Event-ID`
 * (what `EventSource` does by itself) is first sent the current state of each name that changed
 * after it, in the order of their latest changes, then live events; when the log no longer goes
 * back that far (or the id is not one of ours), `event: reset` with `{"name": …}` (a namespace
 * stream: `{"namespace": …}`) tells it to read the profiles again, then live events follow. A
 * comment every 15 s keeps proxies from closing an idle stream. The names are validated, the
 * profile budget drawn and a subscription slot taken before the stream opens: 400 and 429 answer
 * as for a lookup.
 */
import type { IncomingMessage } from 'node:http';
import { EventStream } from '../http/event-stream.js';
import { sendError, sendJson } from '../http/respond.js';
import { INVALID_NAME_MESSAGE } from '../names/name-id.js';
import { InvalidInputError } from '../service/errors.js';
import type {
  LiveReset,
  LiveSink,
  LiveSubscription,
  LiveTarget,
  LiveUpdates,
  ProfileChangeEvent,
} from '../service/live-updates.js';
import { MAX_NAMES_PER_REQUEST } from '../service/profiles-service.js';
import {
  CACHING,
  EVERY,
  INVALID_NAME_ID,
  jsonContent,
  NAME_ID_PARAMETER,
  type Operation,
  type Parameter,
  RATE_LIMIT,
  type Response,
  tooManyRequests,
} from './openapi-components.js';
import { queryOf } from './query.js';
import { rateLimitHeaders } from './rate-limit-headers.js';
import { GET_HEAD, type RestRoute } from './route.js';
import { type ServiceCall, serviceHandler } from './service-handler.js';

const STREAM_NAMES_REQUIRED_MESSAGE = 'The names or namespace parameter is required';

const LAST_EVENT_ID: Parameter = {
  name: 'Last-Event-ID',
  in: 'header',
  required: false,
  description:
    'The `id` of the last event received (`EventSource` sends it by itself when it reconnects): first the current ' +
    'state of each name that changed after it, then live events. An id the change log no longer goes back to, or ' +
    'not one of ours: `event: reset`, then live events.',
  schema: { type: 'string' },
};

const STREAM_ANSWER: Response = {
  description:
    'The stream (`Cache-Control: no-store`); it stays open until the client or the server (at shutdown) ends it.',
  headers: { ...EVERY, ...CACHING, ...RATE_LIMIT },
  content: {
    'text/event-stream': {
      schema: { type: 'string' },
      example: 'id: Y2wxOjQyOjEwMDc\nevent: profile\ndata: {"name":"demo@me",…}\n\n',
    },
  },
};

const STREAM_DESCRIPTION =
  'A `text/event-stream` for `EventSource`: after each change, once lookups answer it, `event: profile` whose ' +
  'data is exactly the `GET /api/{name_id}` document, or `event: deleted` with `{"name": <name ID>}` when the ' +
  'name no longer has a profile; every event has `id:` the cursor of its change (the same cursors as ' +
  '`GET /api/changes`). With `Last-Event-ID`, the changes missed since are sent first (see the header). A comment ' +
  'line every 15 seconds keeps proxies from closing the stream; a client that does not read is disconnected. At ' +
  'most 20 open subscriptions per client (GraphQL `profileChanged` included), the next gets 429.';

export const eventsRoute: RestRoute = {
  pattern: '/api/:name/events',
  methods: GET_HEAD,
  handler: (deps) =>
    serviceHandler(deps, (call) => events(call, deps.live, { names: [call.params.name ?? ''] }, 'name')),
  openApi: {
    pathParameters: { name: NAME_ID_PARAMETER },
    get: {
      operationId: 'profileEvents',
      summary: 'Live updates of a profile (Server-Sent Events)',
      description: `${STREAM_DESCRIPTION} One point of the profile budget when opened.`,
      tags: ['Profiles'],
      parameters: [LAST_EVENT_ID],
      responses: { '200': STREAM_ANSWER, '400': INVALID_NAME_ID, '429': tooManyRequests() },
    },
  },
};

export const changeEventsRoute: RestRoute = {
  pattern: '/api/changes/events',
  methods: GET_HEAD,
  handler: (deps) =>
    serviceHandler(deps, async (call) => {
      const target = streamTarget(call.req);
      if (target === undefined) {
        sendError(call.req, call.res, 400, STREAM_NAMES_REQUIRED_MESSAGE);
        return;
      }
      await events(call, deps.live, target, 'names');
    }),
  openApi: { get: changeEventsOperation() },
};

/** The names or namespace of `/api/changes/events`; undefined when it names neither. */
function streamTarget(req: IncomingMessage): LiveTarget | undefined {
  const query = queryOf(req);
  const names = query.getAll('names').filter((value) => value !== '');
  const namespaces = query.getAll('namespace').filter((value) => value !== '');
  // Both, or a namespace given twice: a namespace holds no comma, so the service refuses it.
  if (namespaces.length > 0) return { namespace: [...namespaces, ...names].join(',') };
  // A name ID cannot contain a comma, so splitting on commas loses nothing.
  return names.length === 0 ? undefined : { names: names.join(',').split(',') };
}

function changeEventsOperation(): Operation {
  return {
    operationId: 'changeEvents',
    summary: 'Live updates of many profiles, or of a namespace (Server-Sent Events)',
    description:
      `${STREAM_DESCRIPTION} Events carry the name (in the document, or in \`{"name": …}\`). With \`Last-Event-ID\`, ` +
      'one event per name that changed after it, in the order of their latest changes. One point of the profile ' +
      'budget per distinct name when opened, one for a namespace.',
    tags: ['Change feed'],
    parameters: [
      {
        name: 'names',
        in: 'query',
        required: false,
        description: `Name IDs to watch, comma-separated, 1 to ${MAX_NAMES_PER_REQUEST}.`,
        schema: { type: 'string' },
        example: 'demo@me,empty@me',
      },
      {
        name: 'namespace',
        in: 'query',
        required: false,
        description: 'Watch every name of this namespace instead (`event: reset` carries `{"namespace": …}`).',
        schema: { type: 'string' },
        example: 'me',
      },
      LAST_EVENT_ID,
    ],
    responses: {
      '200': STREAM_ANSWER,
      '400': {
        description:
          'No names and no namespace, more than 100 names, an invalid namespace, or an invalid name (then `name` is ' +
          'the first invalid one, as given).',
        headers: { ...EVERY, ...RATE_LIMIT },
        content: jsonContent('InvalidInputError', { error: INVALID_NAME_MESSAGE, name: 'not-a-name' }),
      },
      '429': tooManyRequests(),
    },
  };
}

/** What the stream says of one change. */
function writeEvent(stream: EventStream, event: ProfileChangeEvent): boolean {
  if (event.profile === null) return stream.send('deleted', JSON.stringify({ name: event.name }), event.cursor);
  return stream.send('profile', event.profile.document, event.cursor);
}

/** What the stream says when a client has to read its profiles again: one reset per name, or the namespace's. */
function writeReset(stream: EventStream, reset: LiveReset): boolean {
  if (reset.namespace !== undefined) {
    return stream.send('reset', JSON.stringify({ namespace: reset.namespace }), reset.cursor);
  }
  return reset.names.every((name) => stream.send('reset', JSON.stringify({ name }), reset.cursor));
}

async function events(
  call: ServiceCall,
  live: LiveUpdates,
  target: LiveTarget,
  invalidBody: 'name' | 'names',
): Promise<void> {
  const { req, res } = call;
  const stream = new EventStream(res);
  const lastEventId = req.headers['last-event-id'];
  const resumed: LiveTarget = {
    ...target,
    ...(typeof lastEventId === 'string' && lastEventId !== '' ? { after: lastEventId } : {}),
    resume: 'reset',
  };
  const subscription = await subscribe(call, live, resumed, stream, invalidBody);
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
 * The subscription, or undefined when the input was invalid and the 400 is sent: for one name the
 * lookup's body, without the batch's `name` detail; for a list, the batch's (with `name`). Other
 * errors are the frame's to answer.
 */
async function subscribe(
  { req, res, request }: ServiceCall,
  live: LiveUpdates,
  target: LiveTarget,
  stream: EventStream,
  invalidBody: 'name' | 'names',
): Promise<LiveSubscription | undefined> {
  const sink: LiveSink = {
    push: (event) => writeEvent(stream, event),
    reset: (reset) => writeReset(stream, reset),
    end: (reason) => (reason === 'dropped' ? stream.destroy() : stream.end()),
  };
  try {
    return await live.subscribe(request, target, 'rest', sink);
  } catch (error) {
    if (!(error instanceof InvalidInputError)) throw error;
    const name = invalidBody === 'names' ? error.details.name : undefined;
    const body = typeof name === 'string' ? { error: error.message, name } : { error: error.message };
    sendJson(req, res, 400, body, rateLimitHeaders(error.rateLimit));
    return undefined;
  }
}
