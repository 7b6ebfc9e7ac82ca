/**
 * Privacy, on every test database and in test and production mode: the private e-mails
 * (namespace owners, profile creators) of the demo data and of distinctive profiles seeded here
 * never leave the service. A broad set of requests over REST and GraphQL (every profile with every
 * record variant, errors of each kind, introspection, GraphiQL, OpenAPI, metrics, health,
 * readiness, owner checks allowed and refused) is sent, and every response (status line, headers,
 * body) and every line of the server's info-level log is scanned for those e-mails, in any letter
 * case and percent-encoded. The only allowed appearance is an owner-check answer echoing, in its
 * `email` field, the e-mail the client itself sent in that same request; the log may not show
 * them at all.
 */
import { getIntrospectionQuery } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_DATA } from '../src/data/demo-data.js';
import { importLines } from '../src/data/importer.js';
import { seedDemoData } from '../src/data/seed.js';
import { createLogger } from '../src/logging/logger.js';
import { startTestServer, type TestServer } from './support/app-server.js';
import { databaseKinds, useTestDatabase } from './support/databases.js';
import { type RawClient, rawClient } from './support/raw-http.js';

/** Profiles of this suite, with private e-mails nothing else in the project uses. */
const PRIVATE_DATA = [
  { kind: 'namespace', name: 'vault', ownerEmail: 'vault.owner.q7x@private-owner.example' },
  { kind: 'namespace', name: 'both', ownerEmail: 'Both.Roles.q7x@Private-Both.example' },
  {
    kind: 'profile',
    name: 'alpha@vault',
    creatorEmail: 'alpha.creator.q7x@private-creator.example',
    description: 'Every record type, public e-mail included.',
    image: 'https://img.example.org/alpha.png',
    level: 3,
    records: {
      '1': { type: 'name', value: 'Alpha' },
      '2': { type: 'email', value: 'alpha.public@vault.example' },
      '3': { type: 'website', value: 'https://alpha.example' },
      '4': { type: 'phone', value: '+15550199,+15550198' },
      '5': { type: 'tg_bot', value: '@alpha_bot' },
      '6': { type: 'social', value: { twitter: 'alpha', telegram: 'alpha_t' } },
      '7': { type: 'link', value: { Blog: 'https://blog.alpha.example' } },
      '8': { type: 'crypto', value: { btc: 'bc1qalpha', sol: 'AlphaSol' } },
      '9': { type: 'notes', value: { Hours: 'always' } },
      '20': { type: 'img', value: { cover: 'https://img.example.org/alpha-cover.png' } },
      '50': { type: 'web_url', value: 'https://profiles.example.org/alpha@vault' },
      '51': { type: 'web3_url', value: '' },
      '60': { type: 'custom_thing', value: { anything: 'goes' } },
    },
  },
  { kind: 'profile', name: 'beta@vault', creatorEmail: 'Beta.Maker.q7x@Private-Creator.example' },
  { kind: 'profile', name: 'self@both', creatorEmail: 'both.roles.q7x@private-both.example' },
  // A creator in a namespace of the demo data.
  {
    kind: 'profile',
    name: 'gamma@me',
    creatorEmail: 'gamma.q7x@private-creator.example',
    records: { '1': { type: 'name', value: 'Gamma' } },
  },
];

type DataObject = { kind: string; name: string; ownerEmail?: string; creatorEmail?: string; records?: unknown };
const ALL_DATA = [...DEMO_DATA, ...PRIVATE_DATA] as DataObject[];

/** Every private e-mail, as stored. */
const PRIVATE_EMAILS = [
  ...new Set(ALL_DATA.flatMap((line) => [line.ownerEmail, line.creatorEmail].filter((email) => email !== undefined))),
];
const PROFILE_NAMES = ALL_DATA.filter((line) => line.kind === 'profile').map((line) => line.name);

/** Who may truthfully claim which name: creators and namespace owners (for the owner checks that answer true). */
const TRUE_CLAIMS: Array<[email: string, name: string]> = ALL_DATA.filter((line) => line.kind === 'profile').flatMap(
  (profile) => {
    const owner = ALL_DATA.find(
      (line) => line.kind === 'namespace' && line.name === profile.name.split('@')[1],
    )?.ownerEmail;
    return [
      [profile.creatorEmail!, profile.name] as [string, string],
      ...(owner === undefined ? [] : [[owner, profile.name] as [string, string]]),
    ];
  },
);

/** A selection of everything a profile has, every record variant included. */
const FULL_PROFILE = /* GraphQL */ `
  name description image localPart namespace level length version
  attributes { traitType value { ... on StringAttributeValue { text: value } ... on IntAttributeValue { number: value } } }
  records { ...everyVariant }
  nameRecord: record(type: "name") { ...everyVariant }
  emailRecord: record(type: "email") { ...everyVariant }
  phoneRecord: record(type: "phone") { ...everyVariant }
  socialRecord: record(type: "social") { ...everyVariant }
  cryptoRecord: record(type: "crypto") { ...everyVariant }
  notesRecord: record(type: "notes") { ...everyVariant }
`;
const EVERY_VARIANT = /* GraphQL */ `
  fragment everyVariant on ProfileRecord {
    __typename key type raw
    ... on TextRecord { value }
    ... on PhoneRecord { value numbers }
    ... on SocialRecord { entries { key value } tiktok discord twitter youtube facebook linkedin telegram instagram }
    ... on CryptoRecord { entries { key value } btc eth sol }
    ... on MapRecord { entries { key value } entry(key: "Hours") }
    ... on GenericRecord { raw }
  }
`;

/** One request and its answer, with the e-mails the client sent in owner checks of that request. */
interface Exchange {
  label: string;
  /** E-mails as the answer may echo them (trimmed, as sent). */
  sentEmails: string[];
  status: number;
  text: string;
}

/** What is left of `text` once the allowed echoes (`"email":"<as sent>"`) are cut out. */
function withoutEchoes(text: string, sentEmails: string[]): string {
  return sentEmails.reduce((rest, email) => rest.split(`"email":${JSON.stringify(email)}`).join(''), text);
}

/** The private e-mails `text` shows, in any letter case, plain or percent-encoded. */
function privateEmailsIn(text: string): string[] {
  const lower = text.toLowerCase();
  return PRIVATE_EMAILS.filter((email) => {
    const key = email.toLowerCase();
    return lower.includes(key) || lower.includes(encodeURIComponent(key).toLowerCase());
  });
}

describe('the privacy fixtures', () => {
  it('keep private e-mails out of the public data, so that any appearance is a leak', () => {
    const publicData = JSON.stringify(ALL_DATA.map(({ ownerEmail: _owner, creatorEmail: _creator, ...rest }) => rest));
    expect(privateEmailsIn(publicData)).toEqual([]);
    expect(PRIVATE_EMAILS.length).toBeGreaterThanOrEqual(12);
  });
});

describe.each(databaseKinds())('privacy on %s', (kind) => {
  const database = useTestDatabase(kind, async (db) => {
    await seedDemoData(db);
    expect(
      (
        await importLines(
          db,
          PRIVATE_DATA.map((line) => JSON.stringify(line)),
        )
      ).problems,
    ).toEqual([]);
  });

  describe.each(['test', 'production'])('with NODE_ENV=%s', (nodeEnv) => {
    const OWNER_CHECK_LIMIT = 30;
    const logLines: string[] = [];
    const exchanges: Exchange[] = [];
    let server: TestServer;
    let client: RawClient;

    beforeAll(async () => {
      // The service's own logger (with its redaction rules) at info, writing into this array.
      const logger = createLogger('info', {
        pretty: false,
        destination: { write: (line: string) => void logLines.push(line) },
      });
      server = await startTestServer(
        database.handle,
        { NODE_ENV: nodeEnv, OWNER_CHECK_LIMIT: String(OWNER_CHECK_LIMIT) },
        logger,
      );
      client = rawClient(server.url);
    });
    afterAll(async () => {
      client?.close();
      await server?.close();
    });

    async function send(
      label: string,
      path: string,
      options: { method?: string; headers?: Record<string, string>; body?: string; sentEmails?: string[] } = {},
    ) {
      const { sentEmails = [], ...request } = options;
      const response = await client.send(path, request);
      const text = `${response.status}\n${JSON.stringify(response.headers)}\n${response.text}`;
      exchanges.push({ label, sentEmails, status: response.status, text });
      return response;
    }
    const graphql = (label: string, body: unknown, sentEmails: string[] = []) =>
      send(label, '/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
        body: typeof body === 'string' ? body : JSON.stringify(body),
        sentEmails,
      });
    const restCheck = (email: string, name: string) =>
      send(
        `owner check ${email} ${name}`,
        `/api/owner-check?email=${encodeURIComponent(email)}&name=${encodeURIComponent(name)}`,
        {
          sentEmails: [email.trim()],
        },
      );

    it('shows no private e-mail in any response but the owner check’s own echo, and none in the log', async () => {
      // Profiles over REST, in several spellings, with conditional and HEAD requests.
      for (const name of PROFILE_NAMES) {
        const found = await send(`profile ${name}`, `/api/${encodeURIComponent(name)}`);
        expect(found.status, name).toBe(200);
        await send(`profile ${name} upper`, `/api/${encodeURIComponent(name.toUpperCase())}`);
        await send(`profile ${name} 304`, `/api/${encodeURIComponent(name)}`, {
          headers: { 'If-None-Match': String(found.headers.etag) },
        });
      }
      await send('HEAD profile', '/api/alpha@vault', { method: 'HEAD' });

      // REST errors and the other endpoints.
      for (const path of [
        '/api/nobody@vault',
        '/api/not-a-name',
        '/api/%zz',
        '/api/',
        '/api/a/b',
        '/nothing',
        '/api/openapi.json',
        '/metrics',
        '/healthz',
        '/readyz',
      ]) {
        await send(`GET ${path}`, path);
      }
      await send('POST profile', '/api/alpha@vault', { method: 'POST', body: '{}' });
      await send('DELETE owner check', '/api/owner-check', { method: 'DELETE' });
      await send('preflight', '/api/alpha@vault', {
        method: 'OPTIONS',
        headers: { Origin: 'https://app.example', 'Access-Control-Request-Method': 'GET' },
      });
      await send('request id with an e-mail', '/api/beta@vault', { headers: { 'X-Request-Id': PRIVATE_EMAILS[0]! } });

      // GraphQL: every profile with everything it has, one by one and all at once.
      for (const name of PROFILE_NAMES) {
        const answer = await graphql(`graphql profile ${name}`, {
          query: `query ($name: String!) { profile(name: $name) { ${FULL_PROFILE} } } ${EVERY_VARIANT}`,
          variables: { name },
        });
        expect(JSON.parse(answer.text).errors, name).toBeUndefined();
      }
      await graphql('graphql profiles', {
        query: `query ($names: [String!]!) { profiles(names: $names) { ${FULL_PROFILE} } } ${EVERY_VARIANT}`,
        variables: { names: [...PROFILE_NAMES, 'nobody@vault'] },
      });
      await graphql('introspection', { query: getIntrospectionQuery() });
      await send('GraphiQL', '/graphql', { headers: { accept: 'text/html' } });
      await send(
        'GraphQL GET',
        `/graphql?query=${encodeURIComponent('{ profile(name: "alpha@vault") { name records { key type raw } } }')}`,
        {
          headers: { accept: 'application/graphql-response+json' },
        },
      );

      // GraphQL errors: asking for private fields, syntax, bad input, too many names, batching, bad bodies.
      for (const query of [
        '{ profile(name: "alpha@vault") { creatorEmail } }',
        '{ profile(name: "alpha@vault") { owner ownerEmail namespaceOwner email } }',
        '{ profile(name: "alpha@vault") { name }',
        '{ profile(name: "not a name") { name } }',
        `{ profiles(names: ${JSON.stringify(Array.from({ length: 101 }, () => 'alpha@vault'))}) { name } }`,
        '{ ownerCheck(email: "", name: "alpha@vault") { hasCreated } }',
        '{ ownerCheck(email: "nope", name: "alpha@vault") { hasCreated } }',
        'mutation { anything }',
      ]) {
        await graphql(`graphql error ${query.slice(0, 50)}`, { query });
      }
      await graphql('batch', [
        { query: '{ profile(name: "alpha@vault") { name } }' },
        { query: '{ profile(name: "beta@vault") { name } }' },
      ]);
      await graphql('invalid JSON', '{"query": "{ profile(name: \\"alpha@vault\\") { name } }"');
      await graphql('body too large', { query: `{ profile(name: "alpha@vault") { name } } # ${'x'.repeat(70_000)}` });

      // Owner checks: every true claim (echoes allowed), in other letter cases and padded, false
      // claims with another name's private e-mail, invalid ones, and GraphQL aliases, until the
      // budget is spent and the rest are refused.
      for (const [email, name] of TRUE_CLAIMS) {
        const answer = await restCheck(email, name);
        if (answer.status === 200)
          expect(JSON.parse(answer.text), `${email} ${name}`).toMatchObject({ hasCreated: true });
      }
      await restCheck(`  ${PRIVATE_EMAILS[0]!.toUpperCase()}\t`, 'demo@me');
      await restCheck(PRIVATE_EMAILS[1]!, 'alpha@vault');
      await restCheck('someone.else@example.net', 'alpha@vault');
      await restCheck('not-an-email', 'alpha@vault');
      await send('owner check without parameters', '/api/owner-check');
      const [first, second] = TRUE_CLAIMS;
      await graphql(
        'graphql owner checks',
        {
          query:
            'query ($a: String, $b: String, $n: String, $m: String) { a: ownerCheck(email: $a, name: $n) { hasCreated email name } b: ownerCheck(email: $b, name: $m) { hasCreated email name } }',
          variables: { a: first![0], n: first![1], b: second![0], m: second![1] },
        },
        [first![0], second![0]],
      );
      for (let i = 0; i < 6; i++) {
        await restCheck(`${PRIVATE_EMAILS[i % PRIVATE_EMAILS.length]}`, PROFILE_NAMES[i % PROFILE_NAMES.length]!);
      }
      await graphql(
        'graphql owner check refused',
        {
          query: `{ ownerCheck(email: ${JSON.stringify(first![0])}, name: ${JSON.stringify(first![1])}) { hasCreated email name } }`,
        },
        [first![0]],
      );

      // The scan cannot pass for want of material: echoes, refusals and log lines all happened.
      const bodies = exchanges.map((exchange) => exchange.text).join('\n');
      expect(bodies).toContain('"hasCreated":true');
      expect(exchanges.some((exchange) => exchange.status === 429)).toBe(true);
      expect(bodies).toContain('RATE_LIMITED');
      expect(exchanges.some((exchange) => privateEmailsIn(exchange.text).length > 0)).toBe(true);
      expect(logLines.length).toBeGreaterThanOrEqual(exchanges.length);

      const leaks = exchanges.flatMap((exchange) => {
        const shown = privateEmailsIn(withoutEchoes(exchange.text, exchange.sentEmails));
        return shown.length === 0 ? [] : [`${exchange.label}: ${shown.join(', ')}`];
      });
      expect(leaks).toEqual([]);
      const loggedLeaks = logLines.filter((line) => privateEmailsIn(line).length > 0);
      expect(loggedLeaks).toEqual([]);
    }, 60_000);
  });
});
