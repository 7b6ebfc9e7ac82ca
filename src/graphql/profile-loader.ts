import type { GraphQLResolveInfo } from 'graphql';
import type { RequestContext } from './context.js';
import { selectsAnyOf } from './selection.js';

/** Profile fields that read the records table. */
const RECORD_FIELDS: ReadonlySet<string> = new Set(['records', 'record']);

/**
 * The loader for a profile field: with records read in the same statement when the selection
 * wants them, without touching the records table when it does not.
 */
export function profileLoaderFor(context: RequestContext, info: GraphQLResolveInfo) {
  return selectsAnyOf(info, RECORD_FIELDS) ? context.loaders.profileWithRecordsByName : context.loaders.profileByName;
}
