/**
 * The GraphQL schema, assembled here and built once. Each module under ./types, ./queries and
 * ./subscriptions exports a `register…` function and registers nothing by being imported; this
 * module calls them in one visible order and hands each the refs it needs from the ones before.
 */
import { type GraphQLSchema, printSchema } from 'graphql';
import { createBuilder } from './builder.js';
import { registerChangesQuery } from './queries/changes.js';
import { registerDiscoveryQueries } from './queries/discovery.js';
import { registerOwnerCheckQuery } from './queries/owner-check.js';
import { registerProfileQuery } from './queries/profile.js';
import { registerProfilesQuery } from './queries/profiles.js';
import { registerProfileChangedSubscription } from './subscriptions/profile-changed.js';
import { registerProfileConnection } from './types/connections.js';
import { registerProfileType } from './types/profile.js';
import { registerRecordTypes } from './types/records.js';
import { registerWalletFields } from './types/wallets.js';

/**
 * Builds the schema. The order of the calls is the order of `schema.graphql` (`sortSchema: false`):
 * Pothos emits types kind by kind (scalars, interfaces, objects, unions, then the root types),
 * each kind in the order registered, and fields in the order added (Profile's own, then the
 * wallets'; Query's by these calls). Moving a call can change the committed file; the schema
 * test says when it does.
 */
function buildSchema(): GraphQLSchema {
  const builder = createBuilder();
  const ProfileRecordRef = registerRecordTypes(builder);
  const ProfileRef = registerProfileType(builder, ProfileRecordRef);
  registerProfileQuery(builder, ProfileRef);
  registerProfilesQuery(builder, ProfileRef);
  registerOwnerCheckQuery(builder);
  registerWalletFields(builder, ProfileRef);
  const { ProfileConnectionRef, PageInfoRef } = registerProfileConnection(builder, ProfileRef);
  registerDiscoveryQueries(builder, ProfileConnectionRef);
  registerChangesQuery(builder, ProfileRef, PageInfoRef);
  registerProfileChangedSubscription(builder, ProfileRef);
  builder.queryType({
    description:
      'Public profiles of name IDs, ways to find them (prefix search, wallet address, name check), the owner check, ' +
      'and the change feed.',
  });
  // Declaration order, not alphabetical: types and fields read the way the modules present them.
  return builder.toSchema({ sortSchema: false });
}

export const schema = buildSchema();

/** The schema as SDL, exactly as committed in `schema.graphql` (field order as declared). */
export function schemaSdl(): string {
  return `${printSchema(schema)}\n`;
}
