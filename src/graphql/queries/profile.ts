import { INVALID_NAME_MESSAGE, parseNameId } from '../../names/name-id.js';
import { builder } from '../builder.js';
import { badUserInputError } from '../errors.js';
import { profileLoaderFor } from '../profile-loader.js';
import { consumeBudget } from '../rate-limit.js';
import { ProfileRef } from '../types/profile.js';

builder.queryField('profile', (t) =>
  t.field({
    type: ProfileRef,
    nullable: true,
    description:
      'The profile of a name ID (case-insensitive), or null when there is none. ' +
      'An invalid name ID is a BAD_USER_INPUT error. Draws one point of the profile rate limit.',
    args: { name: t.arg.string({ required: true, description: 'A name ID `<local>@<domain>`, e.g. `demo@me`.' }) },
    resolve: async (_root, args, context, info) => {
      // Every lookup counts, valid or not, like a REST request would.
      await consumeBudget(context, 'profile');
      const name = parseNameId(args.name);
      if (name === null) throw badUserInputError(INVALID_NAME_MESSAGE);
      return profileLoaderFor(context, info).load(name.name);
    },
  }),
);
