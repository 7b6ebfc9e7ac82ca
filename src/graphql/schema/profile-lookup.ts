/**
 * `Query.profile`'s service call, made once per request even when made before execution:
 * ../execution/profile-answers.ts looks the profile up to see whether a ready answer is kept, and
 * when none is, hands the call's outcome to the resolver instead of letting it call again (which
 * would draw a second point of the rate limit and could see another profile).
 */
import type { Profile } from '../../profiles/profile.js';
import type { Outcome } from '../../service/request.js';
import type { GraphQLContext } from './context.js';

export type ProfileOutcome = Promise<Outcome<Profile | null>>;

const MADE = Symbol('profile lookup made before execution');

interface MadeLookup {
  name: string;
  outcome: ProfileOutcome;
}

type ContextWithLookup = GraphQLContext & { [MADE]?: MadeLookup | undefined };

/** Offers `outcome` as the lookup of `name` to the next `profile` resolver of the request. */
export function offerLookup(context: GraphQLContext, name: string, outcome: ProfileOutcome): void {
  (context as ContextWithLookup)[MADE] = { name, outcome };
}

/** Withdraws an offer not taken (once the execution it was made for is done). */
export function withdrawLookup(context: GraphQLContext): void {
  (context as ContextWithLookup)[MADE] = undefined;
}

/** The lookup of `name` for the resolver: the one made before execution, else a new one. */
export function profileLookup(context: GraphQLContext, name: string): ProfileOutcome {
  const slot = context as ContextWithLookup;
  const made = slot[MADE];
  if (made !== undefined && made.name === name) {
    slot[MADE] = undefined;
    return made.outcome;
  }
  return context.profiles.lookupProfile(context.serviceRequest, name);
}
