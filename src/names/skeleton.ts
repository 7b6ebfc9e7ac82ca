/**
 * The UTS #39 skeleton of a name part (Unicode Technical Standard #39, §4 "Confusable Detection"):
 * two strings that look alike have the same skeleton. `сосо` (all Cyrillic) and `coco` (Latin)
 * both have the skeleton `coco`. A skeleton is for comparing only, never for showing: `m` becomes
 * `rn`, `0` becomes `O`.
 *
 * internalSkeleton(X), which is skeleton(X) for text without bidirectional controls (names have
 * none): NFD; drop Default_Ignorable_Code_Point characters; replace each character by its
 * prototype in Unicode's confusables.txt; NFD again.
 *
 * The prototypes are Unicode's own confusables.txt as the npm package `unhomoglyph` ships it
 * (data.json: one entry per line of the file, Unicode 13.0.0). Normalisation and the
 * Default_Ignorable_Code_Point property are the JavaScript engine's (ICU). The data is loaded on
 * first use, so processes that never compare names never load it (see docs/decisions.md,
 * "Confusable-character data loaded on first use").
 */
import { createRequire } from 'node:module';

/** The version of confusables.txt the prototypes come from; see docs/discovery.md to change it. */
export const CONFUSABLES_VERSION = '13.0.0';

const DEFAULT_IGNORABLE = /\p{Default_Ignorable_Code_Point}/gu;
const ASCII = /^\p{ASCII}*$/u;
const STARTS_WITH_MARK = /^\p{M}/u;

interface Prototypes {
  /** Code point → prototype. */
  byCodePoint: ReadonlyMap<number, string>;
  /**
   * For each ASCII code unit, what it becomes (itself when unmapped); undefined when some of
   * these could combine with what follows them, so that ASCII text needs the general path.
   */
  ascii: readonly string[] | undefined;
}

let loaded: Prototypes | undefined;

/** The prototypes of the package's data, loaded once. */
function prototypes(): Prototypes {
  if (loaded === undefined) {
    const data = createRequire(import.meta.url)('unhomoglyph/data.json') as Record<string, string>;
    const byCodePoint = new Map<number, string>();
    for (const [source, prototype] of Object.entries(data)) byCodePoint.set(source.codePointAt(0) ?? 0, prototype);
    const ascii = Array.from({ length: 128 }, (_, code) => byCodePoint.get(code) ?? String.fromCharCode(code));
    // Concatenating strings that are in NFD and start with a base character gives a string in
    // NFD, so ASCII text needs no normalisation at all when its prototypes are such strings.
    const concatenable = ascii.every((text) => text.normalize('NFD') === text && !STARTS_WITH_MARK.test(text));
    loaded = { byCodePoint, ascii: concatenable ? ascii : undefined };
  }
  return loaded;
}

/** The UTS #39 skeleton of `text`. */
export function skeleton(text: string): string {
  const { byCodePoint, ascii } = prototypes();
  // Nine names in ten are ASCII: NFD leaves them alone and none is Default_Ignorable.
  if (ascii !== undefined && ASCII.test(text)) {
    let mapped = '';
    for (let index = 0; index < text.length; index += 1) mapped += ascii[text.charCodeAt(index)];
    return mapped;
  }
  return generalSkeleton(text, byCodePoint);
}

/** The definition, step by step; `skeleton` takes a shortcut for ASCII text. */
export function generalSkeleton(text: string, byCodePoint = prototypes().byCodePoint): string {
  const decomposed = text.normalize('NFD').replace(DEFAULT_IGNORABLE, '');
  let mapped = '';
  for (const char of decomposed) mapped += byCodePoint.get(char.codePointAt(0) ?? 0) ?? char;
  return mapped.normalize('NFD');
}
