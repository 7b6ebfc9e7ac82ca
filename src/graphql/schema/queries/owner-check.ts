import type { OwnerCheckResult } from '../../../service/profiles-service.js';
import type { Builder, ObjectOf } from '../builder.js';

/** OwnerCheckResult and `Query.ownerCheck(email:, name:)`. */
export function registerOwnerCheckQuery(builder: Builder): void {
  const OwnerCheckResultRef = registerOwnerCheckResult(builder);
  builder.queryField('ownerCheck', (t) =>
    t.field({
      type: OwnerCheckResultRef,
      // Nullable so that, in a document with several checks, the ones past the budget fail on
      // their own (null plus a RATE_LIMITED error) while the others still answer.
      nullable: true,
      description:
        'Whether an e-mail owns the namespace of a name ID or created it (case-insensitive; false for an unknown ' +
        'name). Rate-limited per client IP together with REST `/api/owner-check`; every `ownerCheck` field counts, ' +
        'valid or not. Null, with an error saying why, when the check was refused.',
      // Optional on purpose: a missing parameter is the contract's BAD_USER_INPUT with the same
      // message as REST, not a GraphQL validation error.
      args: {
        email: t.arg.string({ required: false, description: 'The e-mail address to check.' }),
        name: t.arg.string({ required: false, description: 'The name ID `<local>@<domain>` to check.' }),
      },
      resolve: async (_root, args, { profiles, serviceRequest }) =>
        (await profiles.checkOwner(serviceRequest, args)).value,
    }),
  );
}

function registerOwnerCheckResult(builder: Builder): ObjectOf<OwnerCheckResult> {
  return builder.objectRef<OwnerCheckResult>('OwnerCheckResult').implement({
    description: 'The answer of an owner check. It never reveals whose e-mail owns or created the name.',
    fields: (t) => ({
      hasCreated: t.exposeBoolean('hasCreated', {
        description: 'True when the e-mail owns the namespace of the name or created the name.',
      }),
      email: t.exposeString('email', { description: 'The e-mail that was checked, as given, trimmed.' }),
      name: t.exposeString('name', { description: 'The name ID that was checked, as given, trimmed.' }),
    }),
  });
}
