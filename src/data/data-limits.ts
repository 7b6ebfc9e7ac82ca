/**
 * The largest values a data file may hold, in characters (Unicode code points) unless said
 * otherwise. They sit well above what real profiles hold, and bound what one profile costs: its
 * row, and the work and bytes of every answer about it (docs/data.md, "Limits", says why each
 * is what it is, and what the largest profile and answers come to).
 */
export const DATA_LIMITS = {
  /** A biography: LinkedIn's "About" allows 2,600, most networks 160 to 500. */
  description: 4096,
  /** An avatar URL: what browsers, CDNs and the sitemap protocol reliably carry; the avatar fallback's limit. */
  image: 2048,
  /** Records of a profile: the specification names 12 types. */
  records: 100,
  /** A record type: the specification's are at most 8, reverse-DNS keys (`org.telegram`) about 15. */
  recordType: 64,
  /** A string record value: a URL, an e-mail, a list of phone numbers; an armored PGP key is about 3,100. */
  stringValue: 4096,
  /** Entries of all map records of a profile together: 8 social networks, a list of links, wallets. */
  mapEntries: 256,
  /** A map entry's key: a network, a link label, a currency. */
  mapKey: 128,
  /** A map entry's value: a handle, a URL (as `image`), a wallet address, a short note. */
  mapValue: 2048,
  /** All record types, string values, map keys and map values of a profile together. */
  recordsText: 32768,
  /** Bytes of one line, without its line break: over twice the longest line a valid profile needs. */
  lineBytes: 1024 * 1024,
} as const;
