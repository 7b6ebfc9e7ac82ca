/**
 * The service call of `Query.profile` and `Query.profiles`, made once per request even when made
 * before execution: ../execution/profile-answers.ts looks the profiles up to see whether their
 * answers can be written without executing, and when they cannot, hands the call's outcome to the
 * resolver instead of letting it call again (which would draw the rate limit twice and could see
 * other profiles).
 */
import type { Profile } from '../../profiles/profile.js';
import type { Outcome } from '../../service/request.js';
import type { GraphQLContext } from './context.js';

export type ProfileOutcome = Promise<Outcome<Profile | null>>;
export type ProfilesOutcome = Promise<Outcome<Array<Profile | null>>>;

/** A lookup made before execution: of one name (`profile`) or of a list (`profiles`). */
export type MadeLookup =
  | { names?: undefined; name: string; outcome: ProfileOutcome }
  | { names: readonly string[]; outcome: ProfilesOutcome };

const MADE = Symbol('profile lookup made before execution');

type ContextWithLookup = GraphQLContext & { [MADE]?: MadeLookup | undefined };

/** Offers `lookup` to the next resolver of the request that asks for the same name or names. */
export function offerLookup(context: GraphQLContext, lookup: MadeLookup): void {
  (context as ContextWithLookup)[MADE] = lookup;
}

/** Withdraws an offer not taken (once the execution it was made for is done). */
export function withdrawLookup(context: GraphQLContext): void {
  (context as ContextWithLookup)[MADE] = undefined;
}

/** The lookup of `name` for the `profile` resolver: the one made before execution, else a new one. */
export function profileLookup(context: GraphQLContext, name: string): ProfileOutcome {
  const slot = context as ContextWithLookup;
  const made = slot[MADE];
  if (made !== undefined && made.names === undefined && made.name === name) {
    slot[MADE] = undefined;
    return made.outcome;
  }
  return context.profiles.lookupProfile(context.serviceRequest, name);
}

/** The lookup of `names` for the `profiles` resolver: the one made before execution, else a new one. */
export function profilesLookup(context: GraphQLContext, names: readonly string[]): ProfilesOutcome {
  const slot = context as ContextWithLookup;
  const made = slot[MADE];
  if (made?.names !== undefined && sameNames(made.names, names)) {
    slot[MADE] = undefined;
    return made.outcome;
  }
  return context.profiles.lookupProfiles(context.serviceRequest, names);
}

function sameNames(made: readonly string[], asked: readonly string[]): boolean {
  return made.length === asked.length && made.every((name, index) => name === asked[index]);
}
