/**
 * `Query.changes`: the change feed in Relay's connection shape (ChangeConnection, ChangeEdge,
 * Change, ChangeKind), so that Relay, Apollo Client (`relayStylePagination`) and urql page it as
 * they page any connection. A thin caller of the profiles service (src/service/changes.ts), like
 * `GET /api/changes`.
 */
import type { Profile } from '../../../profiles/profile.js';
import {
  type Change,
  type ChangePage,
  DEFAULT_CHANGES_PAGE,
  MAX_CHANGES_PAGE,
  NAMESPACE_SCAN,
} from '../../../service/changes.js';
import { MAX_NAMES_PER_REQUEST } from '../../../service/profiles-service.js';
import type { Builder, ObjectOf } from '../builder.js';
import type { PageInfoShape } from '../types/connections.js';

/** A change with the page it came in, which loads the page's profiles at once. */
interface ChangeNode {
  change: Change;
  page: ChangePage;
}

function registerChange(builder: Builder, ProfileRef: ObjectOf<Profile>): ObjectOf<ChangeNode> {
  const ChangeKindRef = builder.enumType('ChangeKind', {
    description: 'What happened to a profile.',
    values: {
      CREATED: { value: 'created', description: 'A profile was added.' },
      UPDATED: { value: 'updated', description: 'What a lookup answers of the profile changed.' },
      REMOVED: { value: 'removed', description: 'The profile was removed.' },
    } as const,
  });
  return builder.objectRef<ChangeNode>('Change').implement({
    description: 'One change of a profile, as the change log recorded it in the transaction that made it.',
    fields: (t) => ({
      name: t.string({ description: 'The canonical name ID.', resolve: ({ change }) => change.name }),
      kind: t.field({
        type: ChangeKindRef,
        description: 'Created, updated in what a lookup answers, or removed.',
        resolve: ({ change }) => change.kind,
      }),
      at: t.string({
        description: 'When the change was committed: ISO 8601, UTC.',
        resolve: ({ change }) => change.at.toISOString(),
      }),
      profile: t.field({
        type: ProfileRef,
        nullable: true,
        description:
          'The profile as it is now (it may have changed again since), null when it no longer exists. Selecting it ' +
          'draws one point of the profile rate limit per distinct name of the page, as `profiles(names:)` does.',
        resolve: async ({ change, page }, _args, { profiles, serviceRequest }) =>
          (await profiles.profilesOfChanges(serviceRequest, page)).get(change.name) ?? null,
      }),
    }),
  });
}

interface ChangeEdgeShape {
  cursor: string;
  node: ChangeNode;
}

function registerChangeConnection(
  builder: Builder,
  ChangeRef: ObjectOf<ChangeNode>,
  PageInfoRef: ObjectOf<PageInfoShape>,
): ObjectOf<ChangePage> {
  const ChangeEdgeRef = builder.objectRef<ChangeEdgeShape>('ChangeEdge').implement({
    description: 'A change, with its place in the log.',
    fields: (t) => ({
      cursor: t.exposeString('cursor', {
        description: "Opaque: pass it as `after` for the changes after this one (or as a stream's `after`).",
      }),
      node: t.field({ type: ChangeRef, description: 'The change.', resolve: (edge) => edge.node }),
    }),
  });
  return builder.objectRef<ChangePage>('ChangeConnection').implement({
    description: "A page of the change log, oldest first, in Relay's connection shape.",
    fields: (t) => ({
      edges: t.field({
        type: [ChangeEdgeRef],
        description: 'The changes of the page, in commit order.',
        resolve: (page) => page.changes.map((change) => ({ cursor: change.cursor, node: { change, page } })),
      }),
      pageInfo: t.field({
        type: PageInfoRef,
        description:
          '`endCursor` is past every entry the page looked at, matching its filter or not, also on a page without ' +
          'edges: continue with `after: endCursor` (also to wait for new changes).',
        resolve: (page) => ({
          hasNextPage: page.hasMore,
          hasPreviousPage: false,
          startCursor: page.changes[0]?.cursor ?? null,
          endCursor: page.next,
        }),
      }),
    }),
  });
}

/** Change, ChangeKind, ChangeEdge, ChangeConnection and `Query.changes`. */
export function registerChangesQuery(
  builder: Builder,
  ProfileRef: ObjectOf<Profile>,
  PageInfoRef: ObjectOf<PageInfoShape>,
): void {
  const ChangeRef = registerChange(builder, ProfileRef);
  const ChangeConnectionRef = registerChangeConnection(builder, ChangeRef, PageInfoRef);
  builder.queryField('changes', (t) =>
    t.field({
      type: ChangeConnectionRef,
      description:
        'What changed since a cursor: one entry per change of a profile (created, updated in what a lookup answers, ' +
        'removed), oldest first, in commit order. A client that follows `pageInfo.endCursor` never misses an entry, ' +
        'however writers interleave. Entries are kept for CHANGE_LOG_RETENTION_DAYS (30 by default). Draws one point ' +
        'of the profile rate limit. An invalid cursor, page size, name or namespace is a BAD_USER_INPUT error; a ' +
        'cursor whose entries were pruned is a CURSOR_EXPIRED error (read the profiles again, then start at ' +
        '`after: "now"`).',
      args: {
        after: t.arg.string({
          description:
            "An edge cursor or `endCursor` of an earlier page, or a stream event's cursor: the changes after it. " +
            '`"now"`: no changes, and `endCursor` at the current end (where a new consumer starts). None: from the ' +
            'oldest change kept.',
        }),
        first: t.arg.int({
          defaultValue: DEFAULT_CHANGES_PAGE,
          description: `Changes per page, 1 to ${MAX_CHANGES_PAGE}.`,
        }),
        names: t.arg.stringList({
          description: `Only changes of these name IDs (1 to ${MAX_NAMES_PER_REQUEST}).`,
        }),
        namespace: t.arg.string({
          description:
            `Only changes of names in this namespace. A page looks at no more than ${NAMESPACE_SCAN.toLocaleString('en')} ` +
            'entries of the log, so it may come back short, or empty, with `hasNextPage`: continue with `endCursor`.',
        }),
      },
      resolve: async (_root, args, { profiles, serviceRequest }) =>
        (await profiles.changes(serviceRequest, args)).value,
    }),
  );
}
