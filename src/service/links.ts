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
 * by the WHATWG URL parser (so it is ASCII, with no spaces or control characters, and safe in a
 * header), or null for anything else (empty, relative, `javascript:`, `data:`…).
 */
export function httpUrl(value: string): string | null {
  if (!/^https?:\/\//i.test(value.trim())) return null;
  try {
    const url = new URL(value.trim());
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
  } catch {
    return null;
  }
}
