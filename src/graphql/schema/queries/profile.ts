import type { Profile } from '../../../profiles/profile.js';
import type { Builder, ObjectOf } from '../builder.js';
import { profileLookup } from '../profile-lookup.js';

/** `Query.profile(name:)`: one profile. */
export function registerProfileQuery(builder: Builder, ProfileRef: ObjectOf<Profile>): void {
  builder.queryField('profile', (t) =>
    t.field({
      type: ProfileRef,
      nullable: true,
      description:
        'The profile of a name ID (case-insensitive), or null when there is none. ' +
        'An invalid name ID is a BAD_USER_INPUT error. Draws one point of the profile rate limit.',
      args: { name: t.arg.string({ required: true, description: 'A name ID `<local>@<domain>`, e.g. `demo@me`.' }) },
      resolve: async (_root, args, context) => (await profileLookup(context, args.name)).value,
    }),
  );
}
