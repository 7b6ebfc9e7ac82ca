/**
 * Which writing systems (Unicode scripts) a text uses, and whether it mixes them the way that makes
 * look-alikes possible, after Unicode Technical Standard #39 (Unicode Security Mechanisms).
 *
 * The character data is the JavaScript engine's own: `\p{Script=…}` and `\p{Script_Extensions=…}`
 * regular expressions, which V8 answers from ICU (Node 24: Unicode 17). The list below is only
 * the names of Unicode's script property values (PropertyValueAliases.txt, plus the scripts of
 * Unicode 16 and 17); a name the engine does not know is skipped, and a test checks that every
 * letter and digit the engine knows belongs to one of the scripts listed.
 */

/** Unicode's Script values, long names, without Common, Inherited and Unknown. */
// biome-ignore format: a list of names, packed
const SCRIPT_NAMES = [
  'Adlam', 'Ahom', 'Anatolian_Hieroglyphs', 'Arabic', 'Armenian', 'Avestan', 'Balinese', 'Bamum', 'Bassa_Vah',
  'Batak', 'Bengali', 'Beria_Erfe', 'Bhaiksuki', 'Bopomofo', 'Brahmi', 'Braille', 'Buginese', 'Buhid',
  'Canadian_Aboriginal', 'Carian', 'Caucasian_Albanian', 'Chakma', 'Cham', 'Cherokee', 'Chorasmian', 'Coptic',
  'Cuneiform', 'Cypriot', 'Cypro_Minoan', 'Cyrillic', 'Deseret', 'Devanagari', 'Dives_Akuru', 'Dogra', 'Duployan',
  'Egyptian_Hieroglyphs', 'Elbasan', 'Elymaic', 'Ethiopic', 'Garay', 'Georgian', 'Glagolitic', 'Gothic', 'Grantha',
  'Greek', 'Gujarati', 'Gunjala_Gondi', 'Gurmukhi', 'Gurung_Khema', 'Han', 'Hangul', 'Hanifi_Rohingya', 'Hanunoo',
  'Hatran', 'Hebrew', 'Hiragana', 'Imperial_Aramaic', 'Inscriptional_Pahlavi', 'Inscriptional_Parthian',
  'Javanese', 'Kaithi', 'Kannada', 'Katakana', 'Kawi', 'Kayah_Li', 'Kharoshthi', 'Khitan_Small_Script', 'Khmer',
  'Khojki', 'Khudawadi', 'Kirat_Rai', 'Lao', 'Latin', 'Lepcha', 'Limbu', 'Linear_A', 'Linear_B', 'Lisu', 'Lycian',
  'Lydian', 'Mahajani', 'Makasar', 'Malayalam', 'Mandaic', 'Manichaean', 'Marchen', 'Masaram_Gondi', 'Medefaidrin',
  'Meetei_Mayek', 'Mende_Kikakui', 'Meroitic_Cursive', 'Meroitic_Hieroglyphs', 'Miao', 'Modi', 'Mongolian', 'Mro',
  'Multani', 'Myanmar', 'Nabataean', 'Nag_Mundari', 'Nandinagari', 'New_Tai_Lue', 'Newa', 'Nko', 'Nushu',
  'Nyiakeng_Puachue_Hmong', 'Ogham', 'Ol_Chiki', 'Ol_Onal', 'Old_Hungarian', 'Old_Italic', 'Old_North_Arabian',
  'Old_Permic', 'Old_Persian', 'Old_Sogdian', 'Old_South_Arabian', 'Old_Turkic', 'Old_Uyghur', 'Oriya', 'Osage',
  'Osmanya', 'Pahawh_Hmong', 'Palmyrene', 'Pau_Cin_Hau', 'Phags_Pa', 'Phoenician', 'Psalter_Pahlavi', 'Rejang',
  'Runic', 'Samaritan', 'Saurashtra', 'Sharada', 'Shavian', 'Siddham', 'Sidetic', 'SignWriting', 'Sinhala',
  'Sogdian', 'Sora_Sompeng', 'Soyombo', 'Sundanese', 'Sunuwar', 'Syloti_Nagri', 'Syriac', 'Tagalog', 'Tagbanwa',
  'Tai_Le', 'Tai_Tham', 'Tai_Viet', 'Tai_Yo', 'Takri', 'Tamil', 'Tangsa', 'Tangut', 'Telugu', 'Thaana', 'Thai',
  'Tibetan', 'Tifinagh', 'Tirhuta', 'Todhri', 'Tolong_Siki', 'Toto', 'Tulu_Tigalari', 'Ugaritic', 'Vai', 'Vithkuqi',
  'Wancho', 'Warang_Citi', 'Yezidi', 'Yi', 'Zanabazar_Square',
] as const;

interface ScriptMatcher {
  name: string;
  /** The character's Script is this one. */
  script: RegExp;
  /** The script is among the character's Script_Extensions (the scripts it is used with). */
  extensions: RegExp;
}

let matchers: readonly ScriptMatcher[] | undefined;

/** The scripts the running engine knows, compiled on first use. */
export function knownScripts(): readonly ScriptMatcher[] {
  matchers ??= SCRIPT_NAMES.flatMap((name) => {
    try {
      return [
        { name, script: new RegExp(`^\\p{sc=${name}}$`, 'u'), extensions: new RegExp(`^\\p{scx=${name}}$`, 'u') },
      ];
    } catch {
      return []; // a script newer than this engine's Unicode data
    }
  });
  return matchers;
}

/** Script Common (digits, punctuation, symbols) or Inherited (marks that take their base's script). */
const COMMON_OR_INHERITED = /^[\p{sc=Zyyy}\p{sc=Zinh}]$/u;
/** Characters used with every script. Some Common ones are used with a few only (U+02BC, U+0640). */
const WITH_ANY_SCRIPT = /^[\p{scx=Zyyy}\p{scx=Zinh}]$/u;

/** The Script of a character, or null for Common, Inherited and unassigned characters. */
export function scriptOf(char: string): string | null {
  if (COMMON_OR_INHERITED.test(char)) return null;
  return knownScripts().find((matcher) => matcher.script.test(char))?.name ?? null;
}

/** The Script_Extensions of a character; null for those used with any script. */
export function scriptExtensionsOf(char: string): Set<string> | null {
  if (WITH_ANY_SCRIPT.test(char)) return null;
  return new Set(knownScripts().flatMap((matcher) => (matcher.extensions.test(char) ? [matcher.name] : [])));
}

/**
 * UTS #39 §5.1: Han goes with the Japanese, Korean and Bopomofo writing systems, Hiragana and
 * Katakana with Japanese, Hangul with Korean, Bopomofo with Han-with-Bopomofo, so that 東京とうきょう
 * resolves to Japanese rather than to nothing.
 */
function augmented(extensions: Set<string>): Set<string> {
  const result = new Set(extensions);
  if (extensions.has('Han')) for (const name of ['Han_with_Bopomofo', 'Japanese', 'Korean']) result.add(name);
  if (extensions.has('Hiragana') || extensions.has('Katakana')) result.add('Japanese');
  if (extensions.has('Hangul')) result.add('Korean');
  if (extensions.has('Bopomofo')) result.add('Han_with_Bopomofo');
  return result;
}

/** UTS #39 §5.2 "Highly Restrictive": Latin may be mixed with these writing systems, and only these. */
const HIGHLY_RESTRICTIVE_COVERS: ReadonlyArray<ReadonlySet<string>> = [
  new Set(['Latin', 'Han', 'Hiragana', 'Katakana']),
  new Set(['Latin', 'Han', 'Bopomofo']),
  new Set(['Latin', 'Han', 'Hangul']),
];

export interface ScriptMix {
  /** Whether all characters share a script (UTS #39 "single script", Common and Inherited go with any). */
  singleScript: boolean;
  /** Whether the text meets UTS #39's "Highly Restrictive" level, the one it recommends for identifiers. */
  highlyRestrictive: boolean;
  /** The scripts of the characters, in the order they first appear; Common and Inherited left out. */
  scripts: string[];
}

export function scriptMix(text: string): ScriptMix {
  const chars = [...text];
  const sets = chars.flatMap((char) => {
    const extensions = scriptExtensionsOf(char);
    return extensions === null ? [] : [extensions];
  });
  let resolved: Set<string> | undefined;
  for (const set of sets) {
    const next = augmented(set);
    resolved = resolved === undefined ? next : new Set([...resolved].filter((name) => next.has(name)));
  }
  const singleScript = resolved === undefined || resolved.size > 0;
  const covered = (cover: ReadonlySet<string>) => sets.every((set) => [...set].some((name) => cover.has(name)));
  const scripts = [...new Set(chars.flatMap((char) => scriptOf(char) ?? []))];
  return { singleScript, highlyRestrictive: singleScript || HIGHLY_RESTRICTIVE_COVERS.some(covered), scripts };
}

/** A script's name for people: `Old_Italic` → `Old Italic`. */
export function scriptLabel(name: string): string {
  return name.replaceAll('_', ' ');
}
