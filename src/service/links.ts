/**
 * The links the service writes into its answers (GraphQL `avatarUrl`, WebFinger, vCard): always
 * PUBLIC_URL followed by a path of the service. Nothing of a request (its Host or X-Forwarded-*
 * headers, its query) goes into them, so a forged header cannot end up in a cached answer; the
 * only variable part is a canonical, validated name ID, percent-encoded.
 */

export class Links {
  /** `publicUrl` without a trailing slash, as the configuration gives it. */
  constructor(readonly publicUrl: string) {}

  /** `<PUBLIC_URL>/api/<name>`: the profile lookup. */
  profile(canonicalName: string): string {
    return `${this.publicUrl}/api/${namePath(canonicalName)}`;
  }

  /** `<PUBLIC_URL>/api/<name>/avatar?size=<size>&v=<version>`. */
  avatar(canonicalName: string, size: number, version: string): string {
    return `${this.profile(canonicalName)}/avatar?size=${size}&v=${encodeURIComponent(version)}`;
  }

  /** `<PUBLIC_URL>/api/<name>/vcard`. */
  vcard(canonicalName: string): string {
    return `${this.profile(canonicalName)}/vcard`;
  }
}

/**
 * A name ID as one path segment: each part percent-encoded (a valid name has letters, digits,
 * `.`, `_` and `-`, so only non-ASCII letters are encoded) and the `@` kept, which RFC 3986
 * allows in a path segment and which reads as the contract's examples do (`/api/demo@me`).
 */
export function namePath(canonicalName: string): string {
  const at = canonicalName.indexOf('@');
  if (at < 0) return encodeURIComponent(canonicalName);
  return `${encodeURIComponent(canonicalName.slice(0, at))}@${encodeURIComponent(canonicalName.slice(at + 1))}`;
}

/**
 * A URL from stored data as a link the service may hand out: an absolute http(s) URL, serialised
 * by the WHATWG URL parser and then holding only characters RFC 3986 allows in a URI (so it is
 * ASCII, with no spaces or control characters, safe in a header and valid in a vCard), or null
 * for anything else (empty, relative, `javascript:`, `data:`…).
 */
export function httpUrl(value: string): string | null {
  if (!/^https?:\/\//i.test(value.trim())) return null;
  try {
    const url = new URL(value.trim());
    return url.protocol === 'http:' || url.protocol === 'https:' ? withUriCharactersOnly(url.href) : null;
  } catch {
    return null;
  }
}

/**
 * Characters RFC 3986 does not allow in a URI: all but its unreserved and reserved characters,
 * and `%` unless it starts an escape. The WHATWG URL parser leaves some of them as they are in
 * queries and fragments (`\`, `^`, `{`, `|`, `}`, a `%` of nothing): a `Location` with a raw
 * backslash is not a URI, and clients read it differently.
 */
const NOT_URI_CHARACTER = /[^A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]|%(?![0-9A-Fa-f]{2})/g;

/** Whether a serialised URL holds only characters a URI may (see NOT_URI_CHARACTER). */
export function hasUriCharactersOnly(href: string): boolean {
  NOT_URI_CHARACTER.lastIndex = 0;
  return !NOT_URI_CHARACTER.test(href);
}

/**
 * A serialised (so ASCII) URL with every character a URI may not hold percent-encoded, which is
 * what those characters mean in a URL anyway.
 */
function withUriCharactersOnly(href: string): string {
  return href.replace(
    NOT_URI_CHARACTER,
    (char) => `%${char.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`,
  );
}
