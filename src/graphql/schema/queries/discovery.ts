/**
 * Discovery queries: prefix search, the reverse lookup by wallet address, and the name check.
 * Thin callers of the profiles service (src/service/discovery.ts), like the REST routes.
 */
import type { NameCheck, NamePage } from '../../../service/discovery.js';
import { DEFAULT_PAGE_SIZE, MAX_ADDRESS_LENGTH, MAX_LOOK_ALIKES, MAX_PAGE_SIZE } from '../../../service/discovery.js';
import type { Builder, ObjectOf } from '../builder.js';

function registerNameCheck(builder: Builder): ObjectOf<NameCheck> {
  return builder.objectRef<NameCheck>('NameCheck').implement({
    description:
      'What the service makes of a name ID: its canonical form, whether it is valid and taken, and its risks.',
    fields: (t) => ({
      input: t.exposeString('input', { description: 'The name as given.' }),
      canonical: t.exposeString('canonical', {
        nullable: true,
        description:
          'The canonical form (Unicode NFC, lower case), also of an invalid name; null when the input is not Unicode ' +
          'text (it has an unpaired surrogate).',
      }),
      valid: t.exposeBoolean('valid', { description: 'Whether the name follows the rules of a name ID.' }),
      reason: t.exposeString('reason', {
        nullable: true,
        description: 'Which rule an invalid name breaks, in one sentence; null when it is valid.',
      }),
      exists: t.exposeBoolean('exists', { description: 'Whether a profile has this name (false when invalid).' }),
      warnings: t.exposeStringList('warnings', {
        description:
          'Look-alike risks of a valid name, one sentence each: letters of scripts that should not be mixed in one part ' +
          '(Latin and Cyrillic, say; Latin with Han, Hiragana, Katakana, Hangul or Bopomofo is fine), characters ' +
          'with a plainer equivalent (fullwidth or mathematical letters), and existing names it looks like (see ' +
          '`confusableWith`). Empty when none was found.',
      }),
      confusableWith: t.exposeStringList('confusableWith', {
        description:
          `Existing names that look like this one but are not it: at most ${MAX_LOOK_ALIKES}, canonical, in Unicode ` +
          'code-point order. They are in the same namespace and their local part has the same Unicode UTS #39 ' +
          "skeleton (Unicode's confusables data), so a name written wholly in look-alike letters of another script " +
          'counts: all-Cyrillic `сосо@acme` looks like Latin `coco@acme`. Empty for an invalid name.',
      }),
    }),
  });
}

const pageArgs = (t: Parameters<Parameters<Builder['queryField']>[1]>[0]) => ({
  first: t.arg.int({
    defaultValue: DEFAULT_PAGE_SIZE,
    description: `Names per page, 1 to ${MAX_PAGE_SIZE}. A page is cut short when the profile budget has fewer points left.`,
  }),
  after: t.arg.string({
    description: 'The `endCursor` of the previous page of the same query; none for the first page.',
  }),
});

const BUDGET_NOTE =
  'Draws one point of the profile rate limit per profile returned (at least one), like looking them up one by one.';

/** `Query.searchProfiles`: profiles by the prefix of their names. */
function registerSearchProfiles(builder: Builder, ProfileConnectionRef: ObjectOf<NamePage>): void {
  builder.queryField('searchProfiles', (t) =>
    t.field({
      type: ProfileConnectionRef,
      description:
        'Profiles whose local part (before `@`) starts with a prefix, ordered by canonical name in Unicode code-point ' +
        `order, a page at a time. ${BUDGET_NOTE} An invalid prefix, namespace, page size or cursor is a ` +
        'BAD_USER_INPUT error.',
      args: {
        prefix: t.arg.string({
          required: true,
          description:
            '1 to 63 letters, digits, `.`, `_` or `-`, starting with a letter or digit; canonicalised like a name ' +
            '(NFC, lower case), so `De` finds `demo@me`.',
        }),
        namespace: t.arg.string({ description: 'Only names in this namespace (the part after `@`); all when absent.' }),
        ...pageArgs(t),
      },
      resolve: async (_root, args, { profiles, serviceRequest }) =>
        (await profiles.searchProfiles(serviceRequest, args)).value,
    }),
  );
}

/** `Query.profilesByWallet`: the reverse lookup by wallet address. */
function registerProfilesByWallet(builder: Builder, ProfileConnectionRef: ObjectOf<NamePage>): void {
  builder.queryField('profilesByWallet', (t) =>
    t.field({
      type: ProfileConnectionRef,
      description:
        'Profiles whose `crypto` records list a wallet address, ordered by name in Unicode code-point order: `0x` ' +
        '(EVM) addresses match without regard to case, others exactly. These are claims the profiles make, not ' +
        `verified ownership. ${BUDGET_NOTE} An invalid address, page size or cursor is a BAD_USER_INPUT error.`,
      args: {
        address: t.arg.string({
          required: true,
          description: `The address, 1 to ${MAX_ADDRESS_LENGTH} characters, e.g. \`0x0000000000000000000000000000000000de0000\`.`,
        }),
        ...pageArgs(t),
      },
      resolve: async (_root, args, { profiles, serviceRequest }) =>
        (await profiles.profilesByWallet(serviceRequest, args)).value,
    }),
  );
}

/** NameCheck and `Query.nameCheck(name:)`. */
function registerNameCheckQuery(builder: Builder): void {
  const NameCheckRef = registerNameCheck(builder);
  builder.queryField('nameCheck', (t) =>
    t.field({
      type: NameCheckRef,
      description:
        'Checks a name ID before it is used or shown: canonical form, validity with the reason, whether it is taken, ' +
        'and look-alike warnings. Never an error for a bad name. Draws one point of the profile rate limit.',
      args: { name: t.arg.string({ required: true, description: 'Any text; e.g. `Demo@ME`.' }) },
      resolve: async (_root, args, { profiles, serviceRequest }) =>
        (await profiles.checkName(serviceRequest, args.name)).value,
    }),
  );
}

/** The discovery queries, in this order: `searchProfiles`, `profilesByWallet`, `nameCheck`. */
export function registerDiscoveryQueries(builder: Builder, ProfileConnectionRef: ObjectOf<NamePage>): void {
  registerSearchProfiles(builder, ProfileConnectionRef);
  registerProfilesByWallet(builder, ProfileConnectionRef);
  registerNameCheckQuery(builder);
}
