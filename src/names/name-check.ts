/**
 * The name check: a name ID's canonical form, which rule of the contract it breaks (in one
 * sentence), and the look-alike risks of a valid one. The rules are those of ./name-id.ts, which
 * decides validity; the sentences only explain its answer (a property test holds the two together).
 *
 * Look-alike risks of the name on its own are judged from Unicode data the engine has (ICU):
 * scripts (./scripts.ts) and compatibility normalisation (NFKC). Look-alikes among the existing
 * names (same UTS #39 skeleton, ./skeleton.ts) take the database; the profiles service finds them
 * and words its warning with lookAlikesWarning.
 */
import { canonicalName, codePointLength, parseNameId } from './name-id.js';
import { scriptLabel, scriptMix } from './scripts.js';

export interface NameCheckResult {
  input: string;
  /** NFC, lower case; null when the input is not Unicode text (an unpaired surrogate). */
  canonical: string | null;
  valid: boolean;
  /** Why the name is invalid, in one sentence; null when it is valid. */
  reason: string | null;
  /** Look-alike risks of a valid name, one sentence each. */
  warnings: string[];
}

const MAX_PART_LENGTH = 63;
const NAME_CHARACTER = /^[\p{L}\p{Nd}._-]$/u;
const LETTER_OR_DIGIT = /^[\p{L}\p{Nd}]$/u;
/** Characters that are safe to show inside quotes in a message. */
const SHOWABLE = /^[\p{L}\p{N}\p{P}\p{S}]$/u;

/** In u-mode a surrogate pair is one code point, so only unpaired surrogates are of category Cs. */
const UNPAIRED_SURROGATE = /\p{Cs}/u;

/** Whether `text` is Unicode text: no unpaired surrogate (which UTF-8, and so the database, cannot hold). */
export function isUnicodeText(text: string): boolean {
  return !UNPAIRED_SURROGATE.test(text);
}

export function checkName(input: string): NameCheckResult {
  if (!isUnicodeText(input)) {
    return {
      input,
      canonical: null,
      valid: false,
      reason: 'The name contains an unpaired surrogate, which is not a Unicode character.',
      warnings: [],
    };
  }
  const canonical = canonicalName(input);
  const parsed = parseNameId(input);
  if (parsed === null) {
    return { input, canonical, valid: false, reason: reasonFor(canonical), warnings: [] };
  }
  const warnings = [...lookAlikeWarnings('local part', parsed.local), ...lookAlikeWarnings('namespace', parsed.domain)];
  return { input, canonical, valid: true, reason: null, warnings };
}

/** The first rule that a canonical name breaks. */
function reasonFor(name: string): string {
  const ats = [...name].filter((char) => char === '@').length;
  if (ats === 0) return 'A name ID needs an "@" between the local part and the namespace, as in <local>@<domain>.';
  if (ats > 1) return `A name ID has exactly one "@", and this one has ${ats}.`;
  const at = name.indexOf('@');
  return (
    partProblem('local part', name.slice(0, at)) ??
    partProblem('namespace', name.slice(at + 1)) ??
    // Unreachable while parts are limited to 63 characters and names to 127; kept so that the
    // sentence never goes missing if the limits change.
    `The name has ${codePointLength(name)} characters, more than a name ID may have.`
  );
}

function partProblem(label: string, part: string): string | null {
  if (part === '') return `The ${label} is empty; it needs 1 to ${MAX_PART_LENGTH} characters.`;
  const chars = [...part];
  const bad = chars.find((char) => !NAME_CHARACTER.test(char));
  if (bad !== undefined) {
    return `The ${label} contains ${describe(bad)}, but only letters, digits, ".", "_" and "-" are allowed.`;
  }
  const first = chars[0] ?? '';
  if (!LETTER_OR_DIGIT.test(first))
    return `The ${label} starts with ${describe(first)}; it must start with a letter or digit.`;
  const last = chars.at(-1) ?? '';
  if (!LETTER_OR_DIGIT.test(last))
    return `The ${label} ends with ${describe(last)}; it must end with a letter or digit.`;
  if (chars.length > MAX_PART_LENGTH) {
    return `The ${label} has ${chars.length} characters, but at most ${MAX_PART_LENGTH} are allowed.`;
  }
  return null;
}

/** `"x" (U+0078)`, or just the code point for characters that cannot be shown (spaces, controls). */
function describe(char: string): string {
  const codePoint = `U+${(char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
  return SHOWABLE.test(char) ? `"${char}" (${codePoint})` : codePoint;
}

function lookAlikeWarnings(label: string, part: string): string[] {
  const warnings: string[] = [];
  const mix = scriptMix(part);
  if (!mix.highlyRestrictive) {
    const scripts = mix.scripts.map(scriptLabel);
    const listed = `${scripts.slice(0, -1).join(', ')} and ${scripts.at(-1)}`;
    warnings.push(`The ${label} mixes letters of the ${listed} scripts, so it can look like a different name.`);
  }
  // Compatibility characters (fullwidth, mathematical or circled letters, ligatures) look like
  // plainer ones: NFKC says which.
  const plain = canonicalName(part.normalize('NFKC'));
  if (plain !== part) {
    warnings.push(`The ${label} has characters that look like plainer ones: it can be taken for "${plain}".`);
  }
  return warnings;
}

/** The warning that a valid name looks like existing ones (canonical names), or null for none. */
export function lookAlikesWarning(names: readonly string[]): string | null {
  if (names.length === 0) return null;
  const quoted = names.map((name) => `"${name}"`);
  if (quoted.length === 1) return `The name can be taken for the existing name ${quoted[0]}.`;
  return `The name can be taken for the existing names ${quoted.slice(0, -1).join(', ')} and ${quoted.at(-1)}.`;
}
