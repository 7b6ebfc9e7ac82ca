/**
 * `subscription { profileChanged(names: [...], after: <cursor>) { name cursor profile { … } } }`: an
 * event each time one of the names' profiles changes, after the change is visible to lookups;
 * `profile` is null once the name has none. With `after`, first the names that changed since that
 * cursor (their current state, in the order of their latest changes). The hub (src/service/live-updates.ts) validates the names and draws the
 * budget like `profiles(names:)` (the same errors, `invalidIndexes` included), and refuses a subscription past the open-subscription bounds
 * (RATE_LIMITED). The same field runs over SSE and over WebSocket (graphql-ws).
 */
import type { Profile } from '../../../profiles/profile.js';
import type { ProfileChangeEvent } from '../../../service/live-updates.js';
import { MAX_NAMES_PER_REQUEST } from '../../../service/profiles-service.js';
import type { Builder, ObjectOf } from '../builder.js';
import type { GraphQLContext } from '../context.js';
import { EventQueue } from './event-queue.js';

function registerProfileChange(builder: Builder, ProfileRef: ObjectOf<Profile>): ObjectOf<ProfileChangeEvent> {
  return builder.objectRef<ProfileChangeEvent>('ProfileChange').implement({
    description: 'A profile changed: the name, and its profile as lookups now answer it.',
    fields: (t) => ({
      name: t.exposeString('name', { description: 'The canonical name ID that changed.' }),
      cursor: t.exposeString('cursor', {
        description:
          "The change's place in the change log: subscribe again with `after` set to the last one received to miss " +
          'nothing (the same cursors as `Query.changes`).',
      }),
      profile: t.field({
        type: ProfileRef,
        nullable: true,
        description: 'The profile after the change; null when the name no longer has one (removed).',
        resolve: (event) => event.profile,
      }),
    }),
  });
}

/**
 * Checks the subscription now (its errors are the operation's) and leaves the slot to the
 * queue, which takes it when the transport starts pulling events (see ./event-queue.ts).
 */
async function subscribe(
  context: GraphQLContext,
  names: readonly string[],
  after: string | null | undefined,
): Promise<AsyncIterable<ProfileChangeEvent>> {
  const admission = await context.live.admit(context.serviceRequest, {
    names,
    ...(after === null || after === undefined ? {} : { after }),
    resume: 'refuse',
  });
  return new EventQueue(admission, context.connection);
}

/** ProfileChange, the Subscription type and `Subscription.profileChanged(names:)`. */
export function registerProfileChangedSubscription(builder: Builder, ProfileRef: ObjectOf<Profile>): void {
  const ProfileChangeRef = registerProfileChange(builder, ProfileRef);
  builder.subscriptionType({
    description:
      'Live updates: events as profiles change, over SSE (`Accept: text/event-stream`) or WebSocket (graphql-ws).',
  });

  builder.subscriptionField('profileChanged', (t) =>
    t.field({
      type: ProfileChangeRef,
      description:
        `One event per change of a listed name's profile (1 to ${MAX_NAMES_PER_REQUEST} names), sent once the change ` +
        'is visible to lookups. Invalid names are a BAD_USER_INPUT error; draws one point of the profile rate limit ' +
        'per distinct name; too many open subscriptions (per client IP or per server) is a RATE_LIMITED error. ' +
        'Resumable: with `after`, nothing committed after that cursor is missed.',
      args: {
        names: t.arg.stringList({ required: true, description: 'Name IDs `<local>@<domain>` to watch.' }),
        after: t.arg.string({
          description:
            'A `cursor` of an earlier event (or of `Query.changes`): first the current state of each name that ' +
            'changed after it, in the order of their latest changes, then live events. An invalid cursor is a ' +
            'BAD_USER_INPUT error; one whose changes the log no longer keeps is a CURSOR_EXPIRED error (read the ' +
            'profiles again and subscribe without `after`).',
        }),
      },
      subscribe: (_root, args, context) => subscribe(context, args.names, args.after),
      resolve: (event) => event,
    }),
  );
}
