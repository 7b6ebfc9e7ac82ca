import { emailKey, INVALID_EMAIL_MESSAGE, isValidEmail } from '../../names/email.js';
import { INVALID_NAME_MESSAGE, parseNameId } from '../../names/name-id.js';
import { builder } from '../builder.js';
import { badUserInputError } from '../errors.js';
import { consumeBudget } from '../rate-limit.js';
import { OwnerCheckResultRef } from '../types/owner-check-result.js';

export const MISSING_PARAMETERS_MESSAGE = 'Both email and name parameters are required';

builder.queryField('ownerCheck', (t) =>
  t.field({
    type: OwnerCheckResultRef,
    // Nullable so that, in a document with several checks, the ones past the budget fail on
    // their own (null plus a RATE_LIMITED error) while the others still answer.
    nullable: true,
    description:
      'Whether an e-mail owns the namespace of a name ID or created it (case-insensitive; false for an unknown name). ' +
      'Rate-limited per client IP together with REST `/api/owner-check`; every `ownerCheck` field counts, valid or not. ' +
      'Null, with an error saying why, when the check was refused.',
    // Nullable on purpose: a missing parameter is the contract's BAD_USER_INPUT, not a GraphQL validation error,
    // and the REST shim passes missing query parameters straight through.
    args: {
      email: t.arg.string({ required: false }),
      name: t.arg.string({ required: false }),
    },
    resolve: async (_root, args, context) => {
      await consumeBudget(context, 'ownerCheck');
      const email = args.email?.trim() ?? '';
      const name = args.name?.trim() ?? '';
      if (email === '' || name === '') throw badUserInputError(MISSING_PARAMETERS_MESSAGE);
      if (!isValidEmail(email)) throw badUserInputError(INVALID_EMAIL_MESSAGE);
      const nameId = parseNameId(name);
      if (nameId === null) throw badUserInputError(INVALID_NAME_MESSAGE);
      const hasCreated = await context.loaders.ownership.load({ name: nameId.name, emailKey: emailKey(email) });
      return { hasCreated, email, name };
    },
  }),
);
