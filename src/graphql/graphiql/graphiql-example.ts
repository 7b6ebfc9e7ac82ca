/**
 * The query GraphiQL opens with: one profile with its traits and every record variant, and an
 * owner check. It shows a newcomer the typed records (inline fragments) and the union of
 * attribute values, and it is the reference "real client" query the query limits must admit.
 */
export const GRAPHIQL_EXAMPLE_QUERY = /* GraphQL */ `# Public profiles of name IDs, and the owner check.
# Press the run button (or Ctrl-Enter). Explore the schema with the Docs button.
# Each ownerCheck draws on a small per-IP budget (10 per minute by default).

query Example {
  profile(name: "demo@me") {
    name
    description
    image
    attributes {
      traitType
      value {
        ... on StringAttributeValue { text: value }
        ... on IntAttributeValue { number: value }
      }
    }
    phone: record(type: "phone") {
      ... on PhoneRecord { numbers }
    }
    records {
      key
      type
      __typename
      ... on TextRecord { value }
      ... on PhoneRecord { value numbers }
      ... on SocialRecord { twitter discord instagram entries { key value } }
      ... on CryptoRecord { btc eth sol }
      ... on MapRecord { entries { key value } }
      ... on GenericRecord { raw }
    }
  }
  ownerCheck(email: "hello@demo.example", name: "demo@me") {
    hasCreated
    email
    name
  }
}
`;

/**
 * Discovery, one tab each: prefix search with its Relay cursors, the reverse lookup by wallet
 * with the wallets' CAIP ids, and the name check. Tabs are named after their operations.
 */
export const GRAPHIQL_SEARCH_QUERY = /* GraphQL */ `# Names whose local part starts with a prefix, in code-point order, a page at a time.
# Continue with after: <pageInfo.endCursor>. Costs one point of the profile budget per profile.

query Search {
  searchProfiles(prefix: "De", first: 5) {
    edges {
      cursor
      node { name description }
    }
    pageInfo { hasNextPage endCursor }
  }
}
`;

export const GRAPHIQL_WALLET_QUERY = /* GraphQL */ `# Profiles whose crypto records list an address: 0x addresses in any case, others exactly.
# These are claims the profiles make, not verified ownership.

query Wallet {
  profilesByWallet(address: "0x0000000000000000000000000000000000DE0000") {
    edges {
      node {
        name
        wallets { symbol address chain accountId }
      }
    }
    pageInfo { hasNextPage endCursor }
  }
}
`;

export const GRAPHIQL_NAME_CHECK_QUERY = /* GraphQL */ `# Canonical form, validity with the reason, whether the name is taken, look-alike warnings
# and the existing names a name looks like. "lookalike" has a Cyrillic "е" (\\u0435) among
# Latin letters: it looks like demo@me.

query NameCheck {
  taken: nameCheck(name: "Demo@ME") { input canonical valid reason exists warnings }
  lookalike: nameCheck(name: "d\\u0435mo@me") { canonical valid exists warnings confusableWith }
  invalid: nameCheck(name: "-demo@me") { valid reason }
}
`;

/**
 * Live updates: GraphiQL runs a subscription over SSE (Yoga's page sends it with
 * `Accept: text/event-stream`) and shows each event as it arrives.
 */
const GRAPHIQL_SUBSCRIPTION_QUERY = /* GraphQL */ `# Live updates: run it, import a change of demo@me, see the event (profile null: removed).

subscription Watch {
  profileChanged(names: ["demo@me"]) {
    name
    profile { name description }
  }
}
`;

/** The tabs a first visit opens with: the example first (and active), then discovery, then live updates. */
export const GRAPHIQL_TABS = [
  { query: GRAPHIQL_EXAMPLE_QUERY },
  { query: GRAPHIQL_SEARCH_QUERY },
  { query: GRAPHIQL_WALLET_QUERY },
  { query: GRAPHIQL_NAME_CHECK_QUERY },
  { query: GRAPHIQL_SUBSCRIPTION_QUERY },
];
