/**
 * The exact JSON of the REST profile lookup, as the API contract fixes it: the fields `name,
 * description, image, attributes, records` in that order, attributes as NFT traits, records as an
 * object keyed by numeric strings.
 */
import type { ProfileData } from './operations.js';

export interface RestProfile {
  name: string;
  description: string;
  image: string;
  attributes: Array<{ trait_type: string; value: string | number }>;
  records: Record<string, { type: string; value: unknown }>;
}

export function toRestProfile(profile: NonNullable<ProfileData['profile']>): RestProfile {
  // Integer-like keys of a JS object iterate in ascending numeric order, which is the order the
  // contract asks for; the records arrive sorted anyway.
  const records: RestProfile['records'] = {};
  for (const record of profile.records) records[record.key] = { type: record.type, value: record.raw };
  return {
    name: profile.name,
    description: profile.description,
    image: profile.image,
    attributes: profile.attributes.map((attribute) => ({
      trait_type: attribute.traitType,
      value: attributeValue(attribute),
    })),
    records,
  };
}

type Attribute = NonNullable<ProfileData['profile']>['attributes'][number];

function attributeValue(attribute: Attribute): string | number {
  const { text, number } = attribute.value;
  if (number !== undefined) return number;
  if (text !== undefined) return text;
  throw new Error(`attribute "${attribute.traitType}" has neither a string nor an integer value`);
}
