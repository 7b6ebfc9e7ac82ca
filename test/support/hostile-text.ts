/**
 * Hostile input for the property-based suites (fast-check): fragments attackers and unlucky
 * clients send, strings mixing them, name-shaped strings, hostile-looking stored data, and how a
 * string goes into a raw request line.
 */
import fc from 'fast-check';

/** Valid data that looks hostile: it must be stored and served verbatim, never interpreted. */
export const HOSTILE_LOOKING_DATA = [
  { kind: 'namespace', name: 'sql', ownerEmail: "o'brien+tables@example.net" },
  {
    kind: 'profile',
    name: 'bobby-tables@sql',
    creatorEmail: 'robert{drop}@example.net',
    description: "Robert'); DROP TABLE profiles;-- \u202Etxt.exe",
    image: 'javascript:alert(1)',
    level: 1,
    records: {
      '1': { type: 'name', value: "<script>alert('x')</script>" },
      '9': {
        type: 'notes',
        value: { "' OR 1=1 --": '%00%2F..\\..\\', '😀': 'U+0000 is refused, \u200B zero-width is not' },
      },
    },
  },
];

/** Fragments attackers and unlucky clients send. */
export const FRAGMENTS = [
  "' OR 1=1 --",
  "'; DROP TABLE profiles; --",
  '" OR ""="',
  '1; SELECT pg_sleep(10)',
  "$1'::text",
  '\\',
  '\\\\',
  '..',
  '../',
  '..\\',
  '/',
  '//',
  '%2F',
  '%2f',
  '%5C',
  '%00',
  '\u0000',
  '%zz',
  '%E0%A4%A',
  '%',
  '%%',
  '%25',
  '%2525',
  '%40',
  '%C0%AF',
  '%ED%A0%80',
  '%F4%90%80%80',
  '%FF',
  '<script>alert(1)</script>',
  '"><img src=x onerror=alert(1)>',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a log4j-style probe, sent as it is
  '${jndi:ldap://x}',
  '{{7*7}}',
  '\u202E',
  '\u200B',
  '\uFEFF',
  '\u00A0',
  '😀',
  '👨‍👩‍👧',
  'Ω',
  'мир',
  '中文',
  'עברית',
  'İ',
  'ß',
  'ﬁ',
  'Ａ',
  'e\u0301',
  '@',
  '@@',
  '?',
  '#',
  '&',
  '=',
  '+',
  ';',
  ' ',
  '\t',
  '\r\n',
  'owner-check',
  'demo@me',
  'DEMO@ME',
  'maker@example.com',
  'a'.repeat(63),
  'b'.repeat(64),
  'x'.repeat(300),
];

/**
 * Strings of up to `maxParts` pieces, each one of `fragments`, a short random string (any code
 * unit, or any grapheme) or one of `alsoParts`; one in five (with `overLong`, two in six) random
 * altogether, the second of those over-long.
 */
export function mixedText(
  fragments: readonly string[],
  options: { maxParts: number; alsoParts?: readonly string[]; overLong?: boolean },
): fc.Arbitrary<string> {
  const parts: fc.Arbitrary<string>[] = [
    fc.constantFrom(...fragments),
    fc.string({ unit: 'binary', maxLength: 6 }),
    fc.string({ unit: 'grapheme', maxLength: 6 }),
  ];
  if (options.alsoParts !== undefined) parts.push(fc.constantFrom(...options.alsoParts));
  const kinds: fc.WeightedArbitrary<string>[] = [
    { weight: 4, arbitrary: fc.array(fc.oneof(...parts), { maxLength: options.maxParts }).map((all) => all.join('')) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  ];
  if (options.overLong) {
    kinds.push({ weight: 1, arbitrary: fc.string({ unit: 'binary-ascii', minLength: 100, maxLength: 700 }) });
  }
  return fc.oneof(...kinds);
}

/** Strings that may hold anything, hostile fragments mixed in. */
export const hostileText: fc.Arbitrary<string> = mixedText(FRAGMENTS, {
  maxParts: 10,
  alsoParts: ['a', 'z', '0', '9', '.', '-', '_', 'me', 'studio'],
  overLong: true,
});

const nameParts = [
  'demo',
  'empty',
  'blank',
  'zoë.müller',
  'はなこ',
  'алиса',
  'lab',
  'bobby-tables',
  'nobody',
  'me',
  'studio',
  'мир',
  'sql',
];
const validishPart: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...nameParts),
  fc.stringMatching(/^[a-z0-9][a-z0-9._-]{0,8}[a-z0-9]$/),
  fc.string({ unit: 'grapheme-composite', minLength: 1, maxLength: 8 }),
);

/** Names: hostile text, name-shaped strings (valid or nearly), and the stored names in other spellings. */
export const nameLike: fc.Arbitrary<string> = fc.oneof(
  hostileText,
  fc
    .tuple(fc.oneof(validishPart, hostileText), fc.oneof(validishPart, hostileText))
    .map(([local, domain]) => `${local}@${domain}`),
  fc
    .tuple(
      fc.constantFrom('demo@me', 'zoë.müller@studio', 'алиса@мир', 'はなこ@me', 'bobby-tables@sql'),
      fc.constantFrom('asis', 'upper', 'nfd', 'padded'),
    )
    .map(([name, spelling]) =>
      spelling === 'upper'
        ? name.toUpperCase()
        : spelling === 'nfd'
          ? name.normalize('NFD')
          : spelling === 'padded'
            ? ` ${name}\t`
            : name,
    ),
);

/**
 * A string as a raw path or query part: everything printable ASCII goes out as is (`%`, `/`,
 * `?`, `#`, `\`, quotes...), anything else percent-encoded, as a client must (HTTP request lines
 * are ASCII; see the last test for what happens otherwise).
 */
export const rawEncode = (text: string): string => text.replace(/[^\x21-\x7e]/gu, (char) => encodeURIComponent(char));
