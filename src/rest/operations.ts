/**
 * The fixed GraphQL operations behind the REST paths. REST answers are shaped from what these
 * return, so REST and GraphQL share resolvers, loaders, limits and errors: the two surfaces
 * cannot drift apart. The documents are parsed and validated once, at start.
 */
import { parse, validate, type DocumentNode, type GraphQLSchema } from 'graphql';

const PROFILE_OPERATION = /* GraphQL */ `
  query RestProfile($name: String!) {
    profile(name: $name) {
      name
      description
      image
      version
      attributes {
        traitType
        value {
          ... on StringAttributeValue { text: value }
          ... on IntAttributeValue { number: value }
        }
      }
      records { key type raw }
    }
  }
`;

const OWNER_CHECK_OPERATION = /* GraphQL */ `
  query RestOwnerCheck($email: String, $name: String) {
    ownerCheck(email: $email, name: $name) { hasCreated email name }
  }
`;

export interface RestOperations {
  profile: DocumentNode;
  ownerCheck: DocumentNode;
}

/** Parses the operations and checks them against the schema; a mismatch is a bug, found at start. */
export function prepareRestOperations(schema: GraphQLSchema): RestOperations {
  const operations = { profile: parse(PROFILE_OPERATION), ownerCheck: parse(OWNER_CHECK_OPERATION) };
  for (const [name, document] of Object.entries(operations)) {
    const errors = validate(schema, document);
    if (errors.length > 0) {
      throw new Error(`REST operation "${name}" does not match the GraphQL schema: ${errors.map((e) => e.message).join('; ')}`);
    }
  }
  return operations;
}

/** What the profile operation answers (the selection above, typed). */
// Type aliases, not interfaces: ExecutionResult wants an index-signature-compatible data type.
export type ProfileData = {
  profile: {
    name: string;
    description: string;
    image: string;
    version: string;
    attributes: Array<{ traitType: string; value: { text?: string; number?: number } }>;
    records: Array<{ key: string; type: string; raw: unknown }>;
  } | null;
};

export type OwnerCheckData = {
  ownerCheck: { hasCreated: boolean; email: string; name: string } | null;
};
