/**
 * Avatars: `GET /api/{name_id}/avatar` and GraphQL `Profile.avatarUrl`. A profile whose `image`
 * is an http(s) URL is answered with that image, fetched safely and resized by the service
 * (src/avatars), or, with AVATAR_PROXY=off, with a redirect to it. Otherwise, and when the
 * original cannot be used, the `fallback` decides: a generated initials SVG, a 404, or a redirect
 * to a URL the client gave.
 *
 * The avatar version is what `avatarUrl` puts in `v=`: a hash of the one thing of the profile
 * that the answer depends on, the image URL (or none), of how an image is answered (resized by
 * the service, or a redirect with AVATAR_PROXY=off), and of the drawing's and the resizing's
 * revisions (the initials SVG depends only on the name and size, which the URL holds already).
 * So it changes exactly when the answer to an `avatarUrl` would, and such URLs can be cached as
 * immutable: turning AVATAR_PROXY on moves clients off a redirect they keep for good (which
 * would send them to the origin, the thing the proxy spares them), and turning it off moves
 * them off the resized image. A fallback answered because the original failed is the
 * exception: the failure may be temporary, so that answer is marked `temporary` and never
 * cached for long.
 */
import { createHash } from 'node:crypto';
import { AVATAR_IMAGE_REVISION, type AvatarImages, FAILURE_MEMORY_MS } from '../avatars/avatar-images.js';
import { CONTENT_TYPES, type FormatChoice, type OutputFormat } from '../avatars/image-resize.js';
import type { Variant } from '../avatars/variant-store.js';
import type { RateLimitDecision } from '../limits/rate-limit.js';
import { canonicalName, INVALID_NAME_MESSAGE, parseNameId } from '../names/name-id.js';
import { AVATAR_DRAWING_REVISION, initialsSvg } from '../profiles/avatar-svg.js';
import type { Profile } from '../profiles/profile.js';
import { InvalidInputError } from './errors.js';
import { hasUriCharactersOnly, httpUrl, type Links } from './links.js';
import type { ProfilesService } from './profiles-service.js';
import type { Outcome, ServiceRequest } from './request.js';

export const AVATAR_SIZE = { min: 16, max: 1024, default: 256 } as const;
export const INVALID_SIZE_MESSAGE = `Invalid size, expected an integer from ${AVATAR_SIZE.min} to ${AVATAR_SIZE.max}`;
export const INVALID_FALLBACK_MESSAGE = 'Invalid fallback, expected initials, 404 or an https URL';
export const INVALID_FORMAT_MESSAGE = 'Invalid format, expected webp, jpeg or png';
export const AVATAR_FORMATS: readonly OutputFormat[] = ['webp', 'jpeg', 'png'];
export const MAX_FALLBACK_URL_LENGTH = 2048;
/** The `Content-Type` of an image of each format the service makes. */
export const IMAGE_CONTENT_TYPES: Readonly<Record<OutputFormat, string>> = CONTENT_TYPES;
/** A failed original's fallback is kept no longer than the failure is remembered (the original is tried again then). */
export const FAILED_ORIGINAL_MAX_AGE_SECONDS = FAILURE_MEMORY_MS / 1000;
export const PROFILE_NOT_FOUND_MESSAGE = 'Profile not found';
export const NO_AVATAR_MESSAGE = 'No avatar';

/** What to answer for a name without an http(s) image. */
type AvatarFallback = { kind: 'initials' } | { kind: 'not-found' } | { kind: 'redirect'; url: string };

/**
 * The avatar query parameters as a client sent them: each one's values (none, one, or several).
 * Their checked meaning is kept with the object (a WeakMap), so a caller that hands the same
 * object again, for the same query string, has it checked once.
 */
export interface AvatarParameters {
  readonly size: readonly string[];
  readonly fallback: readonly string[];
  readonly format: readonly string[];
  readonly version: readonly string[];
}

/** The avatar query: the parameters, and the request's `Accept` header (WebP when it names `image/webp`). */
interface AvatarQuery {
  parameters: AvatarParameters;
  accept: string | undefined;
}

/**
 * Caching of an answer: `currentVersion` when `v=` is current; `temporary` for a failed original's
 * fallback; `busy` for the fallback of a variant not made now because the service was busy.
 */
interface AnswerCaching {
  currentVersion: boolean;
  /** Never cached for long: the original failed, and the failure may pass. */
  temporary?: boolean;
  /** Not stored at all: the next request may well get the image. */
  busy?: boolean;
}

export type AvatarAnswer =
  /** 302 to the stored image (AVATAR_PROXY=off) or to the fallback URL. */
  | ({ kind: 'redirect'; location: string } & AnswerCaching)
  /** 200 with the generated SVG; `etag` is a strong validator of exactly these bytes. */
  | ({ kind: 'svg'; svg: string; etag: string } & AnswerCaching)
  /** 200 with the resized image. */
  | ({ kind: 'image'; variant: Variant } & AnswerCaching)
  /** `fallback=404`: no profile, or a profile without a usable http(s) image. */
  | { kind: 'missing'; message: typeof PROFILE_NOT_FOUND_MESSAGE | typeof NO_AVATAR_MESSAGE; busy?: boolean };

export interface AvatarService {
  /** The avatar answer of a name ID. One point of the profile budget, invalid input included. */
  lookupAvatar(request: ServiceRequest, name: string, query: AvatarQuery): Promise<Outcome<AvatarAnswer>>;
  /** `<PUBLIC_URL>/api/<name>/avatar?size=<size>&v=<version>`; an invalid size is InvalidInputError. */
  avatarUrl(profile: Profile, size: number): string;
}

/**
 * The avatar service; `images` fetches and resizes originals (undefined: AVATAR_PROXY=off, a
 * redirect to the image).
 */
export function createAvatarService(
  profiles: ProfilesService,
  links: Links,
  images: AvatarImages | undefined,
): AvatarService {
  const versions = avatarVersions(images === undefined ? 'redirect' : 'resized');
  return {
    async lookupAvatar(request, name, query) {
      const options = avatarOptions(query);
      // The path comes first: an invalid name is reported before an invalid size or fallback.
      // With valid options, lookupProfile's own check of the name is that order already.
      const checkInput =
        typeof options === 'string'
          ? (decision: RateLimitDecision | undefined) => {
              if (parseNameId(name) === null) throw new InvalidInputError(INVALID_NAME_MESSAGE, decision);
              throw new InvalidInputError(options, decision);
            }
          : undefined;
      const { value: profile, rateLimit } = await profiles.lookupProfile(request, name, checkInput);
      // checkInput has thrown for invalid options already; this only tells the compiler.
      if (typeof options === 'string') throw new InvalidInputError(options, rateLimit);
      const target = profile === null ? null : versions.target(profile);
      if (target?.image != null && images !== undefined) {
        const asked = { url: target.image, size: options.size, format: options.format };
        const currentVersion = options.version === target.version;
        // A variant in memory is answered without another turn of the event loop.
        const held = images.held(asked);
        const result = held === undefined ? await images.variant(asked) : { kind: 'variant' as const, variant: held };
        if (result.kind === 'variant')
          return { value: { kind: 'image', variant: result.variant, currentVersion }, rateLimit };
        // The original failed (the images module logged why): the fallback, never cached for long;
        // not stored at all when the service was only busy.
        const caching = { currentVersion: false, temporary: true, busy: result.outcome === 'busy' };
        return { value: fallbackAnswer(canonicalName(name), options, NO_AVATAR_MESSAGE, caching), rateLimit };
      }
      return { value: avatarAnswer(canonicalName(name), target, versions.version(target), options), rateLimit };
    },

    avatarUrl(profile, size) {
      if (!Number.isInteger(size) || size < AVATAR_SIZE.min || size > AVATAR_SIZE.max) {
        throw new InvalidInputError(INVALID_SIZE_MESSAGE);
      }
      return links.avatar(profile.name, size, versions.target(profile).version);
    },
  };
}

/** A profile's image URL (parsed) and avatar version. */
interface AvatarTarget {
  image: string | null;
  version: string;
}

/** How the service answers a profile's http(s) image: resized itself, or a 302 to it. */
type ImageAnswering = 'resized' | 'redirect';

/**
 * The avatar versions of one service. Targets of the profiles read lately are kept: a cached
 * profile is one object, asked for again and again.
 */
function avatarVersions(answering: ImageAnswering) {
  const targets = new WeakMap<Profile, AvatarTarget>();
  const imageRevisions =
    answering === 'resized'
      ? `${AVATAR_DRAWING_REVISION}.${AVATAR_IMAGE_REVISION}`
      : `${AVATAR_DRAWING_REVISION}.redirect`;
  const versionOf = (image: string | null) =>
    createHash('sha256')
      .update(image === null ? `${AVATAR_DRAWING_REVISION}\n` : `${imageRevisions}\n${image}`)
      .digest('base64url')
      .slice(0, 16);
  const withoutImage = versionOf(null);
  return {
    target(profile: Profile): AvatarTarget {
      let target = targets.get(profile);
      if (target === undefined) {
        const image = httpUrl(profile.image);
        target = { image, version: versionOf(image) };
        targets.set(profile, target);
      }
      return target;
    },
    /** The version `v=` is compared with; a name without a profile has the image-less one. */
    version: (target: AvatarTarget | null): string => target?.version ?? withoutImage,
  };
}

interface AvatarOptions {
  size: number;
  fallback: AvatarFallback;
  /** The format `format=` names, else WebP when `Accept` names it, else PNG or JPEG by transparency. */
  format: FormatChoice;
  version: string | undefined;
}

/** The parameters' checked options, with the format `format=` names (undefined: from `Accept`). */
type CheckedParameters = (Omit<AvatarOptions, 'format'> & { format: OutputFormat | undefined }) | string;

const checkedParameters = new WeakMap<AvatarParameters, CheckedParameters>();

/** The checked options, or the message of the first problem. A repeated parameter is invalid. */
function avatarOptions(query: AvatarQuery): AvatarOptions | string {
  let checked = checkedParameters.get(query.parameters);
  if (checked === undefined) {
    checked = checkParameters(query.parameters);
    checkedParameters.set(query.parameters, checked);
  }
  if (typeof checked === 'string') return checked;
  return { ...checked, format: checked.format ?? formatFromAccept(query.accept) };
}

function checkParameters(parameters: AvatarParameters): CheckedParameters {
  const size = parameters.size.length === 0 ? AVATAR_SIZE.default : parseSize(parameters.size);
  if (size === null) return INVALID_SIZE_MESSAGE;
  const fallback =
    parameters.fallback.length === 0 ? { kind: 'initials' as const } : parseFallback(parameters.fallback);
  if (fallback === null) return INVALID_FALLBACK_MESSAGE;
  const format = parameters.format.length === 0 ? undefined : parseFormat(parameters.format);
  if (format === null) return INVALID_FORMAT_MESSAGE;
  return { size, fallback, format, version: parameters.version.length === 1 ? parameters.version[0] : undefined };
}

function parseFormat(values: readonly string[]): OutputFormat | null {
  const [value] = values;
  return values.length === 1 && (AVATAR_FORMATS as readonly string[]).includes(value ?? '')
    ? (value as OutputFormat)
    : null;
}

/**
 * WebP when `Accept` names `image/webp` with a quality above 0; otherwise PNG or JPEG, which every
 * client shows. `image/*` and `*\/*` are not taken as WebP: browsers without WebP send them too.
 */
export function formatFromAccept(accept: string | undefined): FormatChoice {
  if (accept === undefined) return 'png-or-jpeg';
  let format = negotiated.get(accept);
  if (format === undefined) {
    format = formatOfAccept(accept);
    if (negotiated.size >= MAX_REMEMBERED_ACCEPTS) negotiated.clear();
    negotiated.set(accept, format);
  }
  return format;
}

/** Browsers send a few distinct `Accept` values: their formats are remembered (a bounded number). */
const negotiated = new Map<string, FormatChoice>();
const MAX_REMEMBERED_ACCEPTS = 256;

function formatOfAccept(accept: string): FormatChoice {
  for (const range of accept.split(',')) {
    const [type = '', ...parameters] = range.split(';').map((part) => part.trim().toLowerCase());
    if (type !== 'image/webp') continue;
    const quality = parameters.find((parameter) => parameter.startsWith('q='));
    if (quality === undefined || Number(quality.slice(2)) > 0) return 'webp';
  }
  return 'png-or-jpeg';
}

function parseSize(values: readonly string[]): number | null {
  const [value] = values;
  if (values.length !== 1 || value === undefined || !/^[0-9]{1,5}$/.test(value)) return null;
  const size = Number(value);
  return size >= AVATAR_SIZE.min && size <= AVATAR_SIZE.max ? size : null;
}

function parseFallback(values: readonly string[]): AvatarFallback | null {
  const [value] = values;
  if (values.length !== 1 || value === undefined) return null;
  if (value === 'initials') return { kind: 'initials' };
  if (value === '404') return { kind: 'not-found' };
  const url = fallbackUrl(value);
  return url === null ? null : { kind: 'redirect', url };
}

/**
 * An https URL a client gave as its fallback, serialised by the URL parser (ASCII, safe in a
 * `Location` header), or null. Refused: other schemes, more than 2048 characters, white space or
 * control characters (which the parser would silently drop), credentials (`https://a@b` reads
 * like a link to `a`), and URLs whose serialisation is still not a URI: the parser leaves `\`,
 * `^`, `{`, `|`, `}` and a `%` of nothing as they are in a query or fragment, and a `Location`
 * holding them is read differently by different clients. The client can send them
 * percent-encoded; the service does not guess what it meant.
 */
function fallbackUrl(value: string): string | null {
  if (value.length > MAX_FALLBACK_URL_LENGTH || !/^https:\/\//i.test(value) || /[\s\p{Cc}]/u.test(value)) return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  if (url.protocol !== 'https:' || url.username !== '' || url.password !== '' || url.hostname === '') return null;
  return hasUriCharactersOnly(url.href) ? url.href : null;
}

/** The answer without the service's images: a redirect to the image (AVATAR_PROXY=off), else the fallback. */
function avatarAnswer(
  canonicalName: string,
  target: AvatarTarget | null,
  version: string,
  options: AvatarOptions,
): AvatarAnswer {
  const currentVersion = options.version === version;
  if (target?.image != null) return { kind: 'redirect', location: target.image, currentVersion };
  return fallbackAnswer(canonicalName, options, target === null ? PROFILE_NOT_FOUND_MESSAGE : NO_AVATAR_MESSAGE, {
    currentVersion,
  });
}

function fallbackAnswer(
  canonicalName: string,
  options: AvatarOptions,
  missing: typeof PROFILE_NOT_FOUND_MESSAGE | typeof NO_AVATAR_MESSAGE,
  caching: AnswerCaching,
): AvatarAnswer {
  switch (options.fallback.kind) {
    case 'redirect':
      return { kind: 'redirect', location: options.fallback.url, ...caching };
    case 'not-found':
      return caching.busy === true
        ? { kind: 'missing', message: missing, busy: true }
        : { kind: 'missing', message: missing };
    case 'initials': {
      const svg = initialsSvg(canonicalName, options.size);
      const etag = `"${createHash('sha256').update(svg).digest('base64url').slice(0, 27)}"`;
      return { kind: 'svg', svg, etag, ...caching };
    }
  }
}
