/**
 * Bounds on what one GraphQL document may ask, with graphql-armor's Yoga (envelop) plugins, so no
 * query can make the server do unbounded work. Every limit sits well above what a real client
 * sends: about twice the two heaviest legitimate documents, as graphql-armor's own counters
 * measure them (their figures: docs/decisions.md, "GraphQL document limits: about twice the
 * heaviest legitimate document"; test/graphql-armor.test.ts sends both and asserts they pass):
 *
 * - the deepest query, `{ profiles(names: [...]) { name attributes { traitType value { ... on
 *   StringAttributeValue { text: value } ... on IntAttributeValue { number: value } } } records
 *   { key type raw ... on SocialRecord { entries { key value } twitter } } } ownerCheck(...) {
 *   hasCreated email name } }`, sent with 15 aliased `profiles` fields of 100 names each;
 * - GraphiQL's example profile selection (3 aliases of its own) for 15 aliased profiles and an
 *   owner check, the one with the most aliases.
 *
 * A refused document is an ordinary invalid document for the client (see asValidationError);
 * the message names the limit. The limits are in the README, so stating them tells an attacker
 * nothing new and tells an honest client what to change.
 */
import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import type { GraphQLError, ValidationContext } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { requestBodyLimitPlugin } from '../transport/request-body-limit.js';

/**
 * Field nesting, counting fragments as if written inline. Legitimate queries nest 4 deep
 * (profiles → records → entries → key) and the schema is not recursive, so only hand-written
 * introspection (`__type { fields { type { ofType { ofType … } } } } }`) goes deeper; GraphiQL's
 * own introspection (`__schema`) is exempt in graphql-armor.
 */
export const MAX_DEPTH = 10;

/**
 * Aliased fields per operation: those of the GraphiQL-style page above, rounded up. Aliases
 * cannot buy owner checks (each `ownerCheck` field draws on the rate limit) or profile lookups
 * (each name draws on the profile budget); this bounds the resolver work one document repeats.
 */
export const MAX_ALIASES = 64;

/** Lexical tokens per document, which bounds parsing work before anything else runs: twice the heaviest. */
export const MAX_TOKENS = 5_000;

/**
 * Directives per operation. Clients use a handful of `@include`/`@skip`; 64 allows one per
 * aliased field. A flood of directives only serves to make validation work hard.
 */
export const MAX_DIRECTIVES = 64;

/**
 * graphql-armor's cost estimate (objects 2, scalars 1, ×1.5 per level of nesting, introspection
 * exempt): about twice the heaviest legitimate document.
 */
export const MAX_COST = 5_000;

/**
 * JSON batching (several operations as one JSON array) stays off, as is Yoga's default; this is
 * the value for Yoga's `batching` option. No client of this API needs it (aliases and `profiles`
 * fetch many names in one operation), and each limit above applies per operation, so a batch
 * would multiply what one request may cost.
 */
export const GRAPHQL_BATCHING = false;

export interface GraphQLLimitsOptions {
  /** Hide "Did you mean …?" suggestions, which let anyone map the schema by guessing (production). */
  hideFieldSuggestions: boolean;
}

/**
 * A refused document becomes one more validation error instead of an exception, so Yoga answers
 * it like any invalid document: HTTP 400 (200 for `application/json` clients) with
 * `extensions.code` GRAPHQL_VALIDATION_FAILED.
 */
const asValidationError = {
  propagateOnRejection: false,
  onReject: [(context: ValidationContext | null, error: GraphQLError) => context?.reportError(error)],
};

/** graphql-armor's plugins with the limits above. */
function graphqlArmorPlugins(options: GraphQLLimitsOptions): Plugin[] {
  return [
    EnvelopArmorPlugin({
      // Fragments count as if written inline, so how a client organises them does not matter.
      maxDepth: { n: MAX_DEPTH, flattenFragments: true, ...asValidationError },
      // Aliases of __typename count too (graphql-armor exempts them by default): 1,600 of them
      // make a document that costs parsing and memory like any other.
      maxAliases: { n: MAX_ALIASES, allowList: [], ...asValidationError },
      maxDirectives: { n: MAX_DIRECTIVES, ...asValidationError },
      costLimit: { maxCost: MAX_COST, ...asValidationError },
      // Counted while parsing, so it must stop the parser: a syntax error (GRAPHQL_PARSE_FAILED).
      maxTokens: { n: MAX_TOKENS },
      blockFieldSuggestion: { enabled: options.hideFieldSuggestions },
    }),
  ];
}

/** Everything `/graphql` needs from this module: the request body bound and the armor. */
export function graphqlLimitPlugins(options: GraphQLLimitsOptions): Plugin[] {
  return [requestBodyLimitPlugin(), ...graphqlArmorPlugins(options)];
}
