/**
 * Lists of names as every call that takes several checks them (`profiles(names:)`, the REST batch,
 * live-update subscriptions, the change feed's `names`): 1 to MAX_NAMES_PER_REQUEST name IDs,
 * each valid, the first invalid one named in the error.
 */
import type { RateLimitDecision } from '../limits/rate-limit.js';
import { INVALID_NAME_MESSAGE, type NameId, parseNameId } from '../names/name-id.js';
import { InvalidInputError } from './errors.js';

export const MAX_NAMES_PER_REQUEST = 100;
export const TOO_MANY_NAMES_MESSAGE = `At most ${MAX_NAMES_PER_REQUEST} names per request`;

/** Throws the contract's error for a list longer than MAX_NAMES_PER_REQUEST. */
export function checkListLength(rawNames: readonly string[], rateLimit: RateLimitDecision | undefined): void {
  if (rawNames.length > MAX_NAMES_PER_REQUEST) {
    throw new InvalidInputError(TOO_MANY_NAMES_MESSAGE, rateLimit, { maxNames: MAX_NAMES_PER_REQUEST });
  }
}

/**
 * The canonical names of a list in its order, or the contract's error naming the first invalid
 * one as given (`name`) and where every invalid one is (`invalidIndexes`).
 */
export function canonicalNames(
  rawNames: readonly string[],
  parsed: ReadonlyArray<NameId | null>,
  rateLimit: RateLimitDecision | undefined,
): string[] {
  const invalidIndexes = parsed.flatMap((name, index) => (name === null ? [index] : []));
  const [firstInvalid] = invalidIndexes;
  if (firstInvalid !== undefined) {
    throw new InvalidInputError(INVALID_NAME_MESSAGE, rateLimit, { name: rawNames[firstInvalid], invalidIndexes });
  }
  return parsed.map((name) => name?.name ?? '');
}

/** A whole list checked at once: its length, then its names. */
export function parseNameList(rawNames: readonly string[], rateLimit: RateLimitDecision | undefined): string[] {
  checkListLength(rawNames, rateLimit);
  return canonicalNames(
    rawNames,
    rawNames.map((name) => parseNameId(name)),
    rateLimit,
  );
}
