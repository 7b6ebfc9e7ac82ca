import type { Profile } from '../../../profiles/profile.js';
import { MAX_NAMES_PER_REQUEST } from '../../../service/profiles-service.js';
import type { Builder, ObjectOf } from '../builder.js';
import { profilesLookup } from '../profile-lookup.js';

/** `Query.profiles(names:)`: several profiles in one field. */
export function registerProfilesQuery(builder: Builder, ProfileRef: ObjectOf<Profile>): void {
  builder.queryField('profiles', (t) =>
    t.field({
      type: [ProfileRef],
      nullable: { list: false, items: true },
      description:
        `Several profiles at once (at most ${MAX_NAMES_PER_REQUEST} names), in the order asked, null where a name has ` +
        'no profile. Any invalid name ID makes the field a BAD_USER_INPUT error whose extensions name it (`name`, ' +
        'the first as given) and its positions (`invalidIndexes`). Draws one point of the profile rate limit per ' +
        'distinct name.',
      args: {
        names: t.arg.stringList({ required: true, description: 'Name IDs `<local>@<domain>`, in the order wanted.' }),
      },
      resolve: async (_root, args, context) => (await profilesLookup(context, args.names)).value,
    }),
  );
}
