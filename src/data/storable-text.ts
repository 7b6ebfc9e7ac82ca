/**
 * Text that PostgreSQL can store. Its text type holds no U+0000, and UTF-8 has no lone
 * surrogates (half of a UTF-16 pair, which a JSON `\u` escape can still write: `"\ud800"`). The
 * importer unpacks its columns with `json_array_elements_text`, which refuses both for the
 * whole statement (22P05, 22P02), so a line holding one used to fail the import after its last
 * line, without a line number. Every text of a data file is checked here instead.
 */

const ANY_SURROGATE = /[\ud800-\udfff]/;
const SURROGATE_PAIRS = /[\ud800-\udbff][\udc00-\udfff]/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding U+0000 is the point.
const NUL_OR_SURROGATE = /[\u0000\ud800-\udfff]/;

/**
 * Whether `text` is storable and has one character per UTF-16 unit: true for nearly every text
 * of a real file, so one native scan decides both (the importer checks millions of texts).
 */
export function isSimpleText(text: string): boolean {
  return !NUL_OR_SURROGATE.test(text);
}

/**
 * Why `text` cannot be stored, worded to follow the field's name (`"image" holds U+0000 (NUL)
 * at character 3, …`), or null when it can.
 */
export function unstorableTextProblem(text: string): string | null {
  const nul = text.indexOf('\u0000');
  if (nul >= 0) return `holds U+0000 (NUL) at character ${characterAt(text, nul)}, which the database cannot store`;
  if (text.isWellFormed()) return null;
  const at = loneSurrogateIndex(text);
  const unit = text.charCodeAt(at).toString(16).toUpperCase();
  return `holds a lone surrogate U+${unit} at character ${characterAt(text, at)} (half of a UTF-16 pair), which is not Unicode text`;
}

/**
 * Characters of `text`: Unicode code points, as for names (docs/design.md); a lone surrogate
 * counts as one. Native scans only: an import counts every text of millions of lines.
 */
export function characterCount(text: string): number {
  if (!ANY_SURROGATE.test(text)) return text.length;
  return text.length - (text.match(SURROGATE_PAIRS)?.length ?? 0);
}

/** The 1-based character position of the UTF-16 unit at `index`. */
function characterAt(text: string, index: number): number {
  return characterCount(text.slice(0, index)) + 1;
}

/** Index of the first lone surrogate (the caller knows there is one). */
function loneSurrogateIndex(text: string): number {
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (code >= 0xdc00 && code <= 0xdfff) return index;
    if (code >= 0xd800 && code <= 0xdbff) {
      const next = text.charCodeAt(index + 1);
      if (!(next >= 0xdc00 && next <= 0xdfff)) return index; // NaN past the end: lone too
      index += 1;
    }
  }
  return -1;
}
