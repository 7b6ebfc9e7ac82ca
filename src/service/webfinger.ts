/**
 * WebFinger (RFC 7033) for name IDs: `acct:<name_id>` resolves to a JRD with links to the REST
 * profile, the avatar and, when the profile has one, its web page. One point of the profile
 * budget, counted before the resource is checked, like every lookup.
 */
import { parseNameId } from '../names/name-id.js';
import type { Profile } from '../profiles/profile.js';
import { AVATAR_SIZE, type AvatarService } from './avatars.js';
import { InvalidInputError } from './errors.js';
import { httpUrl, type Links } from './links.js';
import type { ProfilesService } from './profiles-service.js';
import type { Outcome, ServiceRequest } from './request.js';

export const RESOURCE_REQUIRED_MESSAGE = 'The resource parameter is required';
export const INVALID_RESOURCE_MESSAGE = 'Invalid resource, expected acct:<local>@<domain>';

const REL_AVATAR = 'http://webfinger.net/rel/avatar';
const REL_PROFILE_PAGE = 'http://webfinger.net/rel/profile-page';

interface JrdLink {
  rel: string;
  type: string;
  href: string;
}

/** The JSON Resource Descriptor (RFC 7033 §4.4), keys in the order they are written. */
interface Jrd {
  subject: string;
  aliases: string[];
  links: JrdLink[];
}

/** The query as a client sent it: every `resource` and every `rel` value. */
interface WebFingerQuery {
  resource: readonly string[];
  rel: readonly string[];
}

export interface WebFingerService {
  /** The JRD of an `acct:` resource, or null when the name has no profile. */
  lookup(request: ServiceRequest, query: WebFingerQuery): Promise<Outcome<Jrd | null>>;
}

export function createWebFingerService(
  profiles: ProfilesService,
  avatars: AvatarService,
  links: Links,
): WebFingerService {
  return {
    async lookup(request, query) {
      const name = accountName(query.resource);
      const { value: profile, rateLimit } = await profiles.lookupProfile(
        request,
        typeof name === 'string' ? name : '',
        (decision) => {
          if (typeof name !== 'string') throw new InvalidInputError(name.problem, decision);
        },
      );
      if (profile === null) return { value: null, rateLimit };
      const all = jrdLinks(profile, avatars, links);
      // RFC 7033 §4.3: with `rel` given, only the links of those relations.
      const wanted = query.rel.length === 0 ? all : all.filter((link) => query.rel.includes(link.rel));
      const jrd = { subject: `acct:${profile.name}`, aliases: [links.profile(profile.name)], links: wanted };
      return { value: jrd, rateLimit };
    },
  };
}

/**
 * The name ID of the one `resource` value, or the problem with it. The scheme is
 * case-insensitive (RFC 3986); the account is percent-decoded once, as an `acct:` URI may encode
 * non-ASCII letters (RFC 7565), and must then be a valid name ID.
 */
function accountName(values: readonly string[]): string | { problem: string } {
  const [value] = values;
  if (value === undefined || value === '') return { problem: RESOURCE_REQUIRED_MESSAGE };
  const invalid = { problem: INVALID_RESOURCE_MESSAGE };
  if (values.length > 1 || !/^acct:/i.test(value)) return invalid;
  let account: string;
  try {
    account = decodeURIComponent(value.slice('acct:'.length));
  } catch {
    return invalid;
  }
  const parsed = parseNameId(account);
  return parsed === null ? invalid : parsed.name;
}

function jrdLinks(profile: Profile, avatars: AvatarService, links: Links): JrdLink[] {
  const result: JrdLink[] = [
    { rel: 'self', type: 'application/json', href: links.profile(profile.name) },
    { rel: REL_AVATAR, type: 'image/*', href: avatars.avatarUrl(profile, AVATAR_SIZE.default) },
  ];
  const page = profile.records.find(
    (record) => record.type === 'web_url' && typeof record.raw === 'string' && record.raw.trim() !== '',
  );
  const href = typeof page?.raw === 'string' ? httpUrl(page.raw) : null;
  if (href !== null) result.push({ rel: REL_PROFILE_PAGE, type: 'text/html', href });
  return result;
}
