/**
 * `GET /api/{name_id}/vcard`: a profile as a vCard 4.0 (src/profiles/vcard.ts says what goes in),
 * through the same lookup as the profile: validation, one point of the profile budget, cache,
 * loaders and errors.
 */
import { createHash } from 'node:crypto';
import { profileVCard } from '../profiles/vcard.js';
import { httpUrl, type Links } from './links.js';
import type { ProfilesService } from './profiles-service.js';
import type { Outcome, ServiceRequest } from './request.js';

interface VCardAnswer {
  /** The vCard, CRLF line ends, folded. */
  text: string;
  /** `<canonical name>.vcf`. */
  filename: string;
  /** A strong validator of exactly this text. */
  etag: string;
}

export interface VCardService {
  /** The vCard of a name ID, or null when it has no profile. One point of the profile budget. */
  lookupVCard(request: ServiceRequest, name: string): Promise<Outcome<VCardAnswer | null>>;
}

export function createVCardService(profiles: ProfilesService, links: Links): VCardService {
  return {
    async lookupVCard(request, name) {
      const { value: profile, rateLimit } = await profiles.lookupProfile(request, name);
      if (profile === null) return { value: null, rateLimit };
      const text = profileVCard(profile, { source: links.vcard(profile.name), httpUrl });
      const etag = `"${createHash('sha256').update(text).digest('base64url').slice(0, 27)}"`;
      return { value: { text, filename: `${profile.name}.vcf`, etag }, rateLimit };
    },
  };
}
