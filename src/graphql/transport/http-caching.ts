/**
 * HTTP caching of GraphQL GET answers that only read public profile data: they get the profile
 * `Cache-Control` and an ETag derived from the answer itself, and a matching `If-None-Match` gets
 * a 304. Such answers change only when an import changes profiles; they are computed from the
 * profile cache, which the import's change notification keeps fresh, so a new answer (and ETag)
 * follows every change. Answers with an owner check, errors, streamed answers (server-sent events,
 * multipart), or answers to POST are never cacheable: GET answers get `Cache-Control: no-store`
 * then.
 *
 * The answer's media type follows the client's Accept (and with it the status of an error), so
 * the answer varies by `Accept`, and its ETag covers the media type as well as the data: two
 * representations never share a strong validator (RFC 9110 8.8.3). A 304 repeats the `Vary` and
 * caching headers the 200 would have had (RFC 9110 15.4.5).
 */
import { createHash } from 'node:crypto';
import { type DocumentNode, type FragmentDefinitionNode, getOperationAST, Kind, type SelectionSetNode } from 'graphql';
import { type Plugin, processRegularResult } from 'graphql-yoga';
import type { EdgeCaching } from '../../edge/edge-caching.js';
import { etagFor, negotiateCoding } from '../../http/compression.js';
import { ifNoneMatchHeaderMatches } from '../../http/conditional.js';
import type { ServiceRequest } from '../../service/request.js';
import { jsonMediaTypeFor } from './accept.js';

/** Root fields whose answers depend on public profile data only. */
const CACHEABLE_ROOT_FIELDS: ReadonlySet<string> = new Set([
  'profile',
  'profiles',
  // Discovery (src/graphql/schema/queries/discovery.ts) reads public data too.
  'searchProfiles',
  'profilesByWallet',
  'nameCheck',
  '__typename',
]);

function readsOnlyProfiles(document: DocumentNode, operationName: string | null | undefined): boolean {
  const operation = getOperationAST(document, operationName ?? undefined);
  if (operation?.operation !== 'query') return false;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  return rootFieldsAreCacheable(operation.selectionSet, fragments, new Set());
}

/**
 * Whether every root field, written directly or in fragments (spread or inline, with or without
 * `@include`/`@skip`), is one of CACHEABLE_ROOT_FIELDS. Validation has refused fragment cycles;
 * `visited` only keeps a fragment spread twice from being walked twice.
 */
function rootFieldsAreCacheable(
  selectionSet: SelectionSetNode,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
  visited: Set<string>,
): boolean {
  return selectionSet.selections.every((selection) => {
    switch (selection.kind) {
      case Kind.FIELD:
        return CACHEABLE_ROOT_FIELDS.has(selection.name.value);
      case Kind.INLINE_FRAGMENT:
        return rootFieldsAreCacheable(selection.selectionSet, fragments, visited);
      case Kind.FRAGMENT_SPREAD: {
        const name = selection.name.value;
        if (visited.has(name)) return true;
        visited.add(name);
        const fragment = fragments.get(name);
        return fragment !== undefined && rootFieldsAreCacheable(fragment.selectionSet, fragments, visited);
      }
      default:
        return false;
    }
  });
}

export function httpCachingPlugin(edge: EdgeCaching): Plugin {
  const cacheable = new WeakMap<Request, boolean>();
  const serviceRequests = new WeakMap<Request, ServiceRequest>();
  // Documents come from the document cache, so the same node comes back for the same text:
  // the walk is done once per document and operation name.
  const byDocument = new WeakMap<DocumentNode, Map<string, boolean>>();
  const readsOnlyProfilesOnce = (document: DocumentNode, operationName: string | null | undefined): boolean => {
    let known = byDocument.get(document);
    if (known === undefined) {
      known = new Map();
      byDocument.set(document, known);
    }
    const key = operationName ?? '';
    let answer = known.get(key);
    if (answer === undefined) {
      answer = readsOnlyProfiles(document, operationName);
      known.set(key, answer);
    }
    return answer;
  };
  return {
    onExecute({ args }) {
      const { request, serviceRequest } = args.contextValue as { request?: Request; serviceRequest?: ServiceRequest };
      if (request?.method !== 'GET') return;
      cacheable.set(request, readsOnlyProfilesOnce(args.document, args.operationName));
      if (serviceRequest !== undefined) serviceRequests.set(request, serviceRequest);
    },
    onResultProcess({ request, result, setResultProcessor, resultProcessor }) {
      if (request.method !== 'GET' || Array.isArray(result) || Symbol.asyncIterator in result) return;
      // Yoga sends the headers of `extensions.http` with the answer (and not the extension itself).
      const headers: Record<string, string> = {};
      result.extensions = { ...result.extensions, http: { ...result.extensions?.http, headers } };
      const mediaType = jsonMediaTypeFor(undefined, request.headers.get('accept') ?? undefined);
      const streamed = resultProcessor !== processRegularResult;
      if (cacheable.get(request) !== true || (result.errors?.length ?? 0) > 0 || streamed || mediaType === undefined) {
        headers['Cache-Control'] = 'no-store';
        return;
      }
      const identityEtag = `"${createHash('sha256')
        .update(mediaType)
        .update('\n')
        .update(JSON.stringify(result.data))
        .digest('base64url')
        .slice(0, 27)}"`;
      // The coding the transport sends the body in (src/http/compression.ts) has its own ETag.
      const etag = etagFor(identityEtag, negotiateCoding(request.headers.get('accept-encoding') ?? undefined));
      const caching: Record<string, string> = { ETag: etag, Vary: 'Accept, Accept-Encoding' };
      for (const [name, value] of Object.entries(edge.headers(serviceRequests.get(request)))) {
        if (value !== undefined) caching[name] = String(value);
      }
      Object.assign(headers, caching);
      if (!ifNoneMatchHeaderMatches(request.headers.get('if-none-match'), etag)) return;
      setResultProcessor(
        (_result, fetchAPI) => new fetchAPI.Response(null, { status: 304, headers: caching }),
        mediaType,
      );
    },
  };
}
