import { builder } from '../builder.js';

export interface OwnerCheckResultShape {
  hasCreated: boolean;
  email: string;
  name: string;
}

export const OwnerCheckResultRef = builder.objectRef<OwnerCheckResultShape>('OwnerCheckResult').implement({
  description: 'The answer of an owner check. It never reveals whose e-mail owns or created the name.',
  fields: (t) => ({
    hasCreated: t.exposeBoolean('hasCreated', {
      description: 'True when the e-mail owns the namespace of the name or created the name.',
    }),
    email: t.exposeString('email', { description: 'The e-mail that was checked, as given, trimmed.' }),
    name: t.exposeString('name', { description: 'The name ID that was checked, as given, trimmed.' }),
  }),
});
