/**
 * The app's GraphQL documents. graphql-codegen (codegen.yml) reads them from here, types each
 * one's result and variables, and writes the persisted-documents manifest
 * (src/generated/graphql/persisted-documents.json) that the service loads: the app then sends only
 * each document's id.
 */
import { graphql } from './generated/graphql/index.js';

export const ProfileLookup = graphql(`
  query ProfileLookup($name: String!) {
    profile(name: $name) {
      name
      description
      image
      wallets { symbol address chain }
    }
  }
`);

export const ProfileBatch = graphql(`
  query ProfileBatch($names: [String!]!) {
    profiles(names: $names) {
      name
      description
    }
  }
`);

export const OwnerCheck = graphql(`
  query OwnerCheck($email: String!, $name: String!) {
    ownerCheck(email: $email, name: $name) {
      hasCreated
      email
      name
    }
  }
`);

export const WatchProfiles = graphql(`
  subscription WatchProfiles($names: [String!]!) {
    profileChanged(names: $names) {
      name
      cursor
      profile { name description }
    }
  }
`);
