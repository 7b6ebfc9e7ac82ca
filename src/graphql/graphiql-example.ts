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
