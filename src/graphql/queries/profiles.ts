import { INVALID_NAME_MESSAGE, parseNameId } from '../../names/name-id.js';
import { builder } from '../builder.js';
import { badUserInputError } from '../errors.js';
import { profileLoaderFor } from '../profile-loader.js';
import { consumeBudget } from '../rate-limit.js';
import { ProfileRef } from '../types/profile.js';

/** Bounds the work of one field; a client with more names sends several queries. */
export const MAX_PROFILES_PER_QUERY = 100;

builder.queryField('profiles', (t) =>
  t.field({
    type: [ProfileRef],
    nullable: { list: false, items: true },
    description:
      `Several profiles at once (at most ${MAX_PROFILES_PER_QUERY} names), in the order asked, null where a name has no profile. ` +
      'Any invalid name ID makes the field a BAD_USER_INPUT error naming its position. ' +
      'Draws one point of the profile rate limit per name.',
    args: { names: t.arg.stringList({ required: true }) },
    resolve: async (_root, args, context, info) => {
      const { names } = args;
      if (names.length > MAX_PROFILES_PER_QUERY) {
        throw badUserInputError(`At most ${MAX_PROFILES_PER_QUERY} names per query, got ${names.length}`, {
          maxNames: MAX_PROFILES_PER_QUERY,
        });
      }
      if (names.length === 0) return [];
      await consumeBudget(context, 'profile', names.length);
      const parsed = names.map((name) => parseNameId(name));
      const invalid = parsed.flatMap((name, index) => (name === null ? [index] : []));
      if (invalid.length > 0) {
        const positions = invalid.map((index) => `names[${index}]`).join(', ');
        throw badUserInputError(`${INVALID_NAME_MESSAGE} (${positions})`, { invalidIndexes: invalid });
      }
      // One failure fails the field once, rather than once per name as loadMany would.
      const loader = profileLoaderFor(context, info);
      return Promise.all(parsed.map((name) => loader.load(name!.name)));
    },
  }),
);
