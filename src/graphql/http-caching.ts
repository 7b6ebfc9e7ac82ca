/**
 * HTTP caching of GraphQL GET answers that only read public profile data: they get the profile
 * `Cache-Control` and an ETag derived from the answer itself, and a matching `If-None-Match` gets
 * a 304. Such answers change only when an import changes profiles; they are computed from the
 * profile cache, which the import's change notification keeps fresh, so a new answer (and ETag)
 * follows every change. Answers with an owner check, errors, or sent by POST are never cacheable:
 * GET answers get `Cache-Control: no-store` then.
 */
import { createHash } from 'node:crypto';
import { type DocumentNode, getOperationAST, Kind } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { ifNoneMatchHeaderMatches } from '../http/conditional.js';

/** Root fields whose answers depend on public profile data only. */
export const CACHEABLE_ROOT_FIELDS: ReadonlySet<string> = new Set([
  'profile',
  'profiles',
  // Discovery (src/graphql/queries/discovery.ts) reads public data too.
  'searchProfiles',
  'profilesByWallet',
  'nameCheck',
  '__typename',
]);

function readsOnlyProfiles(document: DocumentNode, operationName: string | null | undefined): boolean {
  const operation = getOperationAST(document, operationName ?? undefined);
  return (
    operation?.operation === 'query' &&
    operation.selectionSet.selections.every(
      (selection) => selection.kind === Kind.FIELD && CACHEABLE_ROOT_FIELDS.has(selection.name.value),
    )
  );
}

export function httpCachingPlugin(cacheControl: string): Plugin {
  const cacheable = new WeakMap<Request, boolean>();
  return {
    onExecute({ args }) {
      const { request } = args.contextValue as { request?: Request };
      if (request?.method === 'GET') cacheable.set(request, readsOnlyProfiles(args.document, args.operationName));
    },
    onResultProcess({ request, result, setResultProcessor, resultProcessor, acceptableMediaTypes }) {
      if (request.method !== 'GET' || Array.isArray(result) || Symbol.asyncIterator in result) return;
      // Yoga sends the headers of `extensions.http` with the answer (and not the extension itself).
      const headers: Record<string, string> = {};
      result.extensions = { ...result.extensions, http: { ...result.extensions?.http, headers } };
      if (cacheable.get(request) !== true || (result.errors?.length ?? 0) > 0) {
        headers['Cache-Control'] = 'no-store';
        return;
      }
      const etag = `"${createHash('sha256').update(JSON.stringify(result.data)).digest('base64url').slice(0, 27)}"`;
      headers.ETag = etag;
      headers['Cache-Control'] = cacheControl;
      // The media type (and with it the status of an error) follows the client's Accept.
      headers.Vary = 'Accept';
      if (!ifNoneMatchHeaderMatches(request.headers.get('if-none-match'), etag)) return;
      const [mediaType = 'application/json'] = acceptableMediaTypes;
      if (resultProcessor === undefined) return;
      setResultProcessor(
        (_result, fetchAPI) =>
          new fetchAPI.Response(null, { status: 304, headers: { ETag: etag, 'Cache-Control': cacheControl } }),
        mediaType,
      );
    },
  };
}
