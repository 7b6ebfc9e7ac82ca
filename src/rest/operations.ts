/**
 * The fixed GraphQL operations behind the REST paths. REST answers are shaped from what these
 * return, so REST and GraphQL share resolvers, loaders, limits and errors: the two surfaces
 * cannot drift apart. The documents are parsed, validated and compiled once, at start: the REST
 * paths are the hot path, and graphql-jit turns a fixed operation into a function that runs the
 * same resolvers without re-walking the document for every request.
 */
import { type ExecutionResult, type GraphQLSchema, parse, validate } from 'graphql';
import { compileQuery, isCompiledQuery } from 'graphql-jit';

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

/** A fixed operation, ready to run with a request's context and variables. */
export type RestOperation<Data> = (
  context: unknown,
  variables: Record<string, unknown>,
) => Promise<ExecutionResult<Data>>;

export interface RestOperations {
  profile: RestOperation<ProfileData>;
  ownerCheck: RestOperation<OwnerCheckData>;
}

/** Compiles the operations against the schema; a mismatch is a bug, found at start. */
export function prepareRestOperations(schema: GraphQLSchema): RestOperations {
  return {
    profile: compileOperation<ProfileData>(schema, 'profile', PROFILE_OPERATION),
    ownerCheck: compileOperation<OwnerCheckData>(schema, 'ownerCheck', OWNER_CHECK_OPERATION),
  };
}

function compileOperation<Data>(schema: GraphQLSchema, name: string, source: string): RestOperation<Data> {
  const document = parse(source);
  const errors = validate(schema, document);
  const compiled = errors.length === 0 ? compileQuery(schema, document) : { errors };
  if (!isCompiledQuery(compiled)) {
    const reasons = (compiled.errors ?? []).map((error) => error.message).join('; ');
    throw new Error(`REST operation "${name}" does not match the GraphQL schema: ${reasons}`);
  }
  return async (context, variables) => (await compiled.query(undefined, context, variables)) as ExecutionResult<Data>;
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
