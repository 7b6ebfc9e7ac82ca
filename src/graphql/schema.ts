/**
 * The GraphQL schema, assembled from the type and query modules (each registers itself on the
 * builder when imported) and built once.
 */
import { printSchema } from 'graphql';
import { builder } from './builder.js';
import './types/records.js';
import './types/profile.js';
import './queries/profile.js';
import './queries/profiles.js';
import './queries/owner-check.js';
import './types/wallets.js';
import './queries/discovery.js';
import './subscriptions/profile-changed.js';

builder.queryType({
  description:
    'Public profiles of name IDs, ways to find them (prefix search, wallet address, name check), and the owner check.',
});

// Declaration order, not alphabetical: types and fields read the way the modules present them.
export const schema = builder.toSchema({ sortSchema: false });

/** The schema as SDL, exactly as committed in `schema.graphql` (field order as declared). */
export function schemaSdl(): string {
  return `${printSchema(schema)}\n`;
}
