/**
 * E-mail rule of the API contract: the WHATWG HTML "valid e-mail address" production, at most
 * 254 characters. Comparison is case-insensitive.
 */

export const INVALID_EMAIL_MESSAGE = 'Invalid email format';

// https://html.spec.whatwg.org/multipage/input.html#valid-e-mail-address
const WHATWG_EMAIL =
  /^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/;

export const MAX_EMAIL_LENGTH = 254;

export function isValidEmail(input: string): boolean {
  return input.length <= MAX_EMAIL_LENGTH && WHATWG_EMAIL.test(input);
}

/** The form e-mails are compared in. The WHATWG rule admits ASCII only, so lower case suffices. */
export function emailKey(email: string): string {
  return email.toLowerCase();
}
