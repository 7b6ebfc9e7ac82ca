/**
 * Cache tags: the names under which shared caches file an answer, so that one purge request
 * drops every answer that showed what changed. An answer carries the tags of what it read; a
 * change is purged under the tags of what it altered. Both sides are computed here, so they
 * cannot disagree.
 *
 * - `all`: every tagged answer (a purge of it empties the cache of this service's answers);
 * - `p:<name ID>`: the profile of a name, found or not (a cached 404 too), and every answer
 *   showing it (batch, vCard, avatar, WebFinger, GraphQL `profile`/`profiles`, search pages'
 *   profiles);
 * - `ns:<namespace>`: answers listing names of one namespace (a search limited to it);
 * - `search`: search pages over every namespace;
 * - `wallets`: reverse lookups by wallet address (a change names profiles, not the addresses
 *   they held before, so every change purges them all);
 * - `name-check`: GraphQL `nameCheck` (its look-alikes may be any existing name).
 *
 * Name IDs and namespaces are percent-encoded (as `encodeURIComponent` does): a tag is then
 * printable ASCII without spaces or commas, which separate tags in the `xkey` and
 * `Surrogate-Key` headers, and a name cannot smuggle another tag or a header into a purge.
 */
import type { ProfileChange } from '../db/change-notifications.js';

export const ALL_TAG = 'all';
const GLOBAL_SEARCH_TAG = 'search';
export const WALLETS_TAG = 'wallets';
export const NAME_CHECK_TAG = 'name-check';

export const profileTag = (name: string): string => `p:${encodeURIComponent(name)}`;
const namespaceTag = (namespace: string): string => `ns:${encodeURIComponent(namespace)}`;

/** The namespace of a canonical name ID (what follows its `@`). */
function namespaceOf(name: string): string {
  return name.slice(name.lastIndexOf('@') + 1);
}

/** The tags an answer listing the search results of `namespace` (undefined: every namespace) carries. */
export function searchTags(namespace: string | undefined): string[] {
  return namespace === undefined ? [GLOBAL_SEARCH_TAG] : [namespaceTag(namespace)];
}

/**
 * What a change must purge: every answer that showed one of the names (found or not), the
 * searches that could now list or drop them, and the reverse lookups and name checks. Undefined
 * when everything may have changed: the cache is then purged whole.
 */
export function tagsOfChange(change: ProfileChange): string[] | undefined {
  if (change.kind === 'everything') return undefined;
  const tags = new Set<string>();
  const namespaces = new Set<string>();
  for (const name of change.names) {
    tags.add(profileTag(name));
    namespaces.add(namespaceOf(name));
  }
  for (const namespace of namespaces) tags.add(namespaceTag(namespace));
  tags.add(GLOBAL_SEARCH_TAG);
  tags.add(WALLETS_TAG);
  tags.add(NAME_CHECK_TAG);
  return [...tags];
}
