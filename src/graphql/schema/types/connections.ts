/**
 * ProfileConnection: a page of profiles in Relay's connection shape (edges with cursors, and
 * PageInfo), the answer of the name listings (search, reverse lookup by wallet). The listing
 * reads names; the edges load their profiles in one batch, already paid for by the listing.
 */
import type { Profile } from '../../../profiles/profile.js';
import type { NamePage } from '../../../service/discovery.js';
import type { Builder, ObjectOf } from '../builder.js';

export interface PageInfoShape {
  hasNextPage: boolean;
  hasPreviousPage: boolean;
  startCursor: string | null;
  endCursor: string | null;
}

function registerPageInfo(builder: Builder): ObjectOf<PageInfoShape> {
  return builder.objectRef<PageInfoShape>('PageInfo').implement({
    description: 'Where a page stands in its listing or feed (Relay cursor connections).',
    fields: (t) => ({
      hasNextPage: t.exposeBoolean('hasNextPage', {
        description: 'Whether more follow: ask again with `after: endCursor`.',
      }),
      hasPreviousPage: t.exposeBoolean('hasPreviousPage', {
        description: 'Always false: listings and the change feed page forwards only (`first`/`after`).',
      }),
      startCursor: t.exposeString('startCursor', {
        nullable: true,
        description: 'The cursor of the first edge; null for an empty page.',
      }),
      endCursor: t.exposeString('endCursor', {
        nullable: true,
        description: 'The cursor to continue after this page with; null for an empty page.',
      }),
    }),
  });
}

interface EdgeShape {
  cursor: string;
  node: Profile;
}

function registerProfileEdge(builder: Builder, ProfileRef: ObjectOf<Profile>): ObjectOf<EdgeShape> {
  return builder.objectRef<EdgeShape>('ProfileEdge').implement({
    description: 'A profile in a listing, with its position.',
    fields: (t) => ({
      cursor: t.exposeString('cursor', {
        description: 'Opaque: pass it as `after` to continue after this profile, with the same query.',
      }),
      node: t.field({ type: ProfileRef, description: 'The profile.', resolve: (edge) => edge.node }),
    }),
  });
}

/**
 * PageInfo, ProfileEdge and ProfileConnection, in that order; returns ProfileConnection, the type
 * the listing queries answer with, and PageInfo, which the change feed's connection shares.
 */
export function registerProfileConnection(
  builder: Builder,
  ProfileRef: ObjectOf<Profile>,
): { ProfileConnectionRef: ObjectOf<NamePage>; PageInfoRef: ObjectOf<PageInfoShape> } {
  const PageInfoRef = registerPageInfo(builder);
  const ProfileEdgeRef = registerProfileEdge(builder, ProfileRef);
  const ProfileConnectionRef = builder.objectRef<NamePage>('ProfileConnection').implement({
    description:
      "A page of profiles in code-point order of their names, in Relay's connection shape. Cursors are opaque and " +
      'belong to their query; a cursor of another query, or one that was altered, is a BAD_USER_INPUT error.',
    fields: (t) => ({
      edges: t.field({
        type: [ProfileEdgeRef],
        description:
          'The profiles of the page, in order. A profile removed between reading the page and loading it is left out.',
        resolve: async (page, _args, { profiles, serviceRequest }) => {
          const loaded = await profiles.profilesOfPage(serviceRequest, page);
          return page.names.flatMap((_name, index) => {
            const node = loaded[index];
            const cursor = page.cursors[index];
            return node === null || node === undefined || cursor === undefined ? [] : [{ cursor, node }];
          });
        },
      }),
      pageInfo: t.field({
        type: PageInfoRef,
        description: 'Whether more follow, and the cursors to continue with.',
        resolve: (page) => ({
          hasNextPage: page.hasNextPage,
          hasPreviousPage: false,
          startCursor: page.cursors[0] ?? null,
          endCursor: page.cursors.at(-1) ?? null,
        }),
      }),
    }),
  });
  return { ProfileConnectionRef, PageInfoRef };
}
