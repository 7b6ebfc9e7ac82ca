/**
 * Discovery on every test database, over a real socket: prefix search and the reverse lookup by
 * wallet (REST and GraphQL: order, paging, cursors, validation, budgets, caching), the wallet
 * index kept by the database for every writer, the query plans, wallets, and the name check.
 */

import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importLines } from '../src/data/importer.js';
import { seedDemoData } from '../src/data/seed.js';
import type { DatabaseHandle } from '../src/db/database.js';
import { namesByPrefixQuery, namesByWalletQuery } from '../src/db/discovery-queries.js';
import { sql } from '../src/db/drizzle.js';
import {
  GRAPHIQL_NAME_CHECK_QUERY,
  GRAPHIQL_SEARCH_QUERY,
  GRAPHIQL_WALLET_QUERY,
} from '../src/graphql/graphiql/graphiql-example.js';
import { walletAddressKey } from '../src/profiles/wallets.js';
import { GRAPHQL_PATH_RERUN, startTestServer, type TestServer } from './support/app-server.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from './support/databases.js';
import { importGenerated, queryPlan, rows, withOlderSchema } from './support/older-schema.js';

const EVM = '0xAbCdEf0000000000000000000000000000000001';
const SOL = 'So1anaCaseSensitive11111111111111111111111';

/** Names chosen so that code-point order differs from what a locale would do ('-' '.' '0' '@' '_' 'é' 'я'). */
const DISC_NAMES = ['a', 'a-b', 'a.b', 'a0', 'a_b', 'aa', 'ab', 'aé', 'aя', 'b', 'ba'];

const FIXTURES = [
  { kind: 'namespace', name: 'disc', ownerEmail: 'owner@example.com' },
  { kind: 'namespace', name: 'other', ownerEmail: 'owner@example.com' },
  ...DISC_NAMES.map((local, index) => ({
    kind: 'profile',
    name: `${local}@disc`,
    creatorEmail: 'maker@example.com',
    records:
      index % 3 === 0
        ? // Every third lists the EVM address, in a case of its own; one lists it twice.
          {
            '8': {
              type: 'crypto',
              value:
                index === 0
                  ? { eth: EVM.toLowerCase(), matic: EVM.toUpperCase().replace('0X', '0x') }
                  : { eth: index % 2 === 0 ? EVM : EVM.toLowerCase() },
            },
          }
        : {},
  })),
  {
    kind: 'profile',
    name: 'ab@other',
    creatorEmail: 'maker@example.com',
    records: { '8': { type: 'crypto', value: { sol: SOL } } },
  },
  {
    kind: 'profile',
    name: 'sol@other',
    creatorEmail: 'maker@example.com',
    records: { '8': { type: 'crypto', value: { sol: SOL.toLowerCase() } } },
  },
].map((object) => JSON.stringify(object));

/** Code-point order (what "C" gives for UTF-8): byte order of UTF-8. */
const codePointOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

interface SearchBody {
  names: string[];
  nextCursor: string | null;
}

interface ConnectionBody {
  edges: Array<{ cursor: string; node: { name: string } }>;
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
}

type GraphQLResult = {
  data?: Record<string, unknown> | null;
  errors?: Array<{ message: string; extensions?: { code?: string } }>;
};

describe.each(databaseKinds())('discovery on %s', (kind) => {
  let testDb: TestDatabase;
  let handle: DatabaseHandle;
  let server: TestServer;

  const get = (pathAndQuery: string, init: RequestInit = {}) => fetch(`${server.url}${pathAndQuery}`, init);
  const json = async <T>(pathAndQuery: string): Promise<{ status: number; body: T; headers: Headers }> => {
    const response = await get(pathAndQuery);
    return { status: response.status, headers: response.headers, body: (await response.json()) as T };
  };
  const graphql = async (query: string, variables: Record<string, unknown> = {}, url = server.url) => {
    const response = await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query, variables }),
    });
    return (await response.json()) as GraphQLResult;
  };
  const walletRows = async () =>
    rows<{ name: string; symbol: string; address_key: string }>(
      await handle.db.execute(
        sql`select name, symbol, address_key from wallet_addresses order by name collate "C", symbol, address_key`,
      ),
    );

  /** Every name of a REST listing, a page of `limit` at a time. */
  async function allPages(base: string, limit: number): Promise<string[][]> {
    const pages: string[][] = [];
    let cursor: string | null = null;
    do {
      const separator = base.includes('?') ? '&' : '?';
      const url: string = `${base}${separator}limit=${limit}${cursor === null ? '' : `&cursor=${cursor}`}`;
      const { status, body }: { status: number; body: SearchBody } = await json<SearchBody>(url);
      expect(status, url).toBe(200);
      pages.push(body.names);
      cursor = body.nextCursor;
    } while (cursor !== null && pages.length < 100);
    return pages;
  }

  beforeAll(async () => {
    testDb = await createTestDatabase(kind);
    handle = await testDb.open();
    await seedDemoData(handle.db);
    expect((await importLines(handle.db, FIXTURES)).ok).toBe(true);
    server = await startTestServer(handle, { PROFILE_LIMIT: '100000', CACHE_MAX_AGE: '60' });
  });
  afterAll(async () => {
    await server?.close();
    await handle?.close();
    await testDb?.drop();
  });

  describe('prefix search', () => {
    it.skipIf(GRAPHQL_PATH_RERUN)(
      'lists the names whose local part starts with the prefix, in code-point order',
      async () => {
        const { status, body, headers } = await json<SearchBody>('/api/search?prefix=a&namespace=disc');
        expect(status).toBe(200);
        expect(headers.get('content-type')).toBe('application/json; charset=utf-8');
        expect(Object.keys(body)).toEqual(['names', 'nextCursor']);
        const expected = DISC_NAMES.filter((local) => local.startsWith('a'))
          .map((local) => `${local}@disc`)
          .sort(codePointOrder);
        expect(body).toEqual({ names: expected, nextCursor: null });
        // Names, not local parts, decide the order: "a-b@disc" < "a.b@disc" < "a0@disc" < "a@disc".
        expect(expected.slice(0, 4)).toEqual(['a-b@disc', 'a.b@disc', 'a0@disc', 'a@disc']);
      },
    );

    it.skipIf(GRAPHQL_PATH_RERUN)(
      'canonicalises the prefix like a name and searches every namespace without one',
      async () => {
        const upper = await json<SearchBody>(`/api/search?prefix=${encodeURIComponent('AB')}`);
        expect(upper.body.names).toEqual(['ab@disc', 'ab@other']);
        const nfd = await json<SearchBody>(`/api/search?prefix=${encodeURIComponent('AÉ'.normalize('NFD'))}`);
        expect(nfd.body.names).toEqual(['aé@disc']);
        const cyrillic = await json<SearchBody>(`/api/search?prefix=${encodeURIComponent('АЛИ')}`);
        expect(cyrillic.body.names).toEqual(['алиса@мир']);
        const none = await json<SearchBody>('/api/search?prefix=zzz');
        expect(none.body).toEqual({ names: [], nextCursor: null });
        const elsewhere = await json<SearchBody>('/api/search?prefix=ab&namespace=OTHER');
        expect(elsewhere.body.names).toEqual(['ab@other']);
        const unknownNamespace = await json<SearchBody>('/api/search?prefix=a&namespace=nowhere');
        expect(unknownNamespace.body.names).toEqual([]);
      },
    );

    it.skipIf(GRAPHQL_PATH_RERUN)(
      'pages through every name exactly once, in order, whatever the page size',
      async () => {
        const [all = []] = await allPages('/api/search?prefix=a', 100);
        expect(all.length).toBeGreaterThan(8);
        for (const limit of [1, 2, 3]) {
          const pages = await allPages('/api/search?prefix=a', limit);
          expect(pages.flat()).toEqual(all);
          expect(pages.slice(0, -1).every((page) => page.length === limit)).toBe(true);
        }
      },
    );

    it.skipIf(GRAPHQL_PATH_RERUN)(
      'continues correctly after the cursor name is removed and others are added',
      async () => {
        const lines = ['m1', 'm2', 'm3', 'm4'].map((local) =>
          JSON.stringify({ kind: 'profile', name: `${local}@other`, creatorEmail: 'maker@example.com' }),
        );
        expect((await importLines(handle.db, lines)).ok).toBe(true);
        const first = await json<SearchBody>('/api/search?prefix=m&namespace=other&limit=2');
        expect(first.body.names).toEqual(['m1@other', 'm2@other']);
        await handle.db.execute(sql`delete from profiles where name = 'm2@other'`);
        const added = ['m0', 'm2x'].map((local) =>
          JSON.stringify({ kind: 'profile', name: `${local}@other`, creatorEmail: 'maker@example.com' }),
        );
        expect((await importLines(handle.db, added)).ok).toBe(true);
        const next = await json<SearchBody>(
          `/api/search?prefix=m&namespace=other&limit=2&cursor=${first.body.nextCursor}`,
        );
        // "m2x@other" sorts after "m2@other" ("x" > "@"), "m0@other" before it.
        expect(next.body.names).toEqual(['m2x@other', 'm3@other']);
        await handle.db.execute(sql`delete from profiles where name like 'm%@other'`);
      },
    );

    it.skipIf(GRAPHQL_PATH_RERUN).each([
      ['', 'The prefix parameter is required'],
      ['prefix=', 'The prefix parameter is required'],
      [
        'prefix=-a',
        'Invalid prefix, expected 1 to 63 letters, digits, ".", "_" or "-", starting with a letter or digit',
      ],
      [
        'prefix=a%40b',
        'Invalid prefix, expected 1 to 63 letters, digits, ".", "_" or "-", starting with a letter or digit',
      ],
      [
        `prefix=${'a'.repeat(64)}`,
        'Invalid prefix, expected 1 to 63 letters, digits, ".", "_" or "-", starting with a letter or digit',
      ],
      [
        'prefix=a&prefix=b',
        'Invalid prefix, expected 1 to 63 letters, digits, ".", "_" or "-", starting with a letter or digit',
      ],
      [
        'prefix=a&namespace=a%20b',
        'Invalid namespace, expected 1 to 63 letters, digits, ".", "_" or "-", starting and ending with a letter or digit',
      ],
      ['prefix=a&limit=0', 'Invalid page size (limit, first), expected an integer from 1 to 100'],
      ['prefix=a&limit=101', 'Invalid page size (limit, first), expected an integer from 1 to 100'],
      ['prefix=a&limit=1.5', 'Invalid page size (limit, first), expected an integer from 1 to 100'],
      ['prefix=a&limit=-1', 'Invalid page size (limit, first), expected an integer from 1 to 100'],
      ['prefix=a&limit=ten', 'Invalid page size (limit, first), expected an integer from 1 to 100'],
      ['prefix=a&cursor=abc', 'Invalid cursor, expected one from a page of the same query'],
      ['prefix=a&cursor=%00', 'Invalid cursor, expected one from a page of the same query'],
    ])('refuses %j with 400', async (query, message) => {
      const response = await get(`/api/search?${query}`);
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({ error: message });
    });

    it.skipIf(GRAPHQL_PATH_RERUN)(
      'refuses a cursor of another query, or one pointing outside the query, with 400',
      async () => {
        const page = await json<SearchBody>('/api/search?prefix=a&limit=1');
        const cursor = page.body.nextCursor;
        expect(cursor).not.toBeNull();
        for (const query of ['prefix=ab', 'prefix=a&namespace=disc', 'prefix=A&limit=5']) {
          const response = await get(`/api/search?${query}&cursor=${cursor}`);
          // The last one is the same query (canonical prefix, another page size): its cursor works.
          expect(response.status, query).toBe(query === 'prefix=A&limit=5' ? 200 : 400);
        }
        const wallet = await json<SearchBody>(`/api/wallet/${EVM}?limit=1`);
        expect((await get(`/api/search?prefix=a&cursor=${wallet.body.nextCursor}`)).status).toBe(400);
      },
    );

    it('answers in GraphQL with a Relay connection, the same names and working cursors', async () => {
      const query = `query S($prefix: String!, $namespace: String, $first: Int, $after: String) {
        searchProfiles(prefix: $prefix, namespace: $namespace, first: $first, after: $after) {
          edges { cursor node { name } }
          pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
        }
      }`;
      const rest = await json<SearchBody>('/api/search?prefix=a&namespace=disc');
      const names: string[] = [];
      let after: string | null = null;
      for (let round = 0; round < 20; round += 1) {
        const result = await graphql(query, { prefix: 'A', namespace: 'disc', first: 4, after });
        expect(result.errors).toBeUndefined();
        const connection = result.data?.searchProfiles as ConnectionBody;
        names.push(...connection.edges.map((edge) => edge.node.name));
        expect(connection.pageInfo.startCursor).toBe(connection.edges[0]?.cursor ?? null);
        expect(connection.pageInfo.endCursor).toBe(connection.edges.at(-1)?.cursor ?? null);
        expect(connection.pageInfo.hasPreviousPage).toBe(false);
        if (!connection.pageInfo.hasNextPage) break;
        after = connection.pageInfo.endCursor;
      }
      expect(names).toEqual(rest.body.names);
      // Any edge's cursor continues after that edge.
      const page = (await graphql(query, { prefix: 'a', namespace: 'disc', first: 3 })).data
        ?.searchProfiles as ConnectionBody;
      const fromSecond = (
        await graphql(query, { prefix: 'a', namespace: 'disc', first: 2, after: page.edges[1]?.cursor })
      ).data?.searchProfiles as ConnectionBody;
      expect(fromSecond.edges.map((edge) => edge.node.name)).toEqual(rest.body.names.slice(2, 4));
    });

    it('gives BAD_USER_INPUT in GraphQL for what REST refuses with 400', async () => {
      const query = `query S($prefix: String!, $namespace: String, $first: Int, $after: String) {
        searchProfiles(prefix: $prefix, namespace: $namespace, first: $first, after: $after) { edges { cursor } }
      }`;
      for (const variables of [
        { prefix: '' },
        { prefix: '-x' },
        { prefix: 'a', namespace: '' },
        { prefix: 'a', first: 0 },
        { prefix: 'a', first: 101 },
        { prefix: 'a', after: 'bm9wZQ' },
      ]) {
        const result = await graphql(query, variables);
        expect(result.errors?.[0]?.extensions?.code, JSON.stringify(variables)).toBe('BAD_USER_INPUT');
      }
    });
  });

  describe('reverse lookup by wallet', () => {
    const evmHolders = DISC_NAMES.filter((_, index) => index % 3 === 0)
      .map((local) => `${local}@disc`)
      .sort(codePointOrder);

    it.skipIf(GRAPHQL_PATH_RERUN)(
      'finds the names that list an 0x address in any case, once each, in code-point order',
      async () => {
        for (const spelling of [EVM, EVM.toLowerCase(), EVM.toUpperCase().replace('0X', '0x')]) {
          const { status, body } = await json<SearchBody & { address: string }>(`/api/wallet/${spelling}`);
          expect(status).toBe(200);
          expect(Object.keys(body)).toEqual(['address', 'names', 'nextCursor']);
          expect(body).toEqual({ address: spelling, names: evmHolders, nextCursor: null });
        }
      },
    );

    it.skipIf(GRAPHQL_PATH_RERUN)('matches other addresses exactly', async () => {
      expect((await json<SearchBody>(`/api/wallet/${SOL}`)).body.names).toEqual(['ab@other']);
      expect((await json<SearchBody>(`/api/wallet/${SOL.toLowerCase()}`)).body.names).toEqual(['sol@other']);
      expect((await json<SearchBody>(`/api/wallet/${SOL.toUpperCase()}`)).body.names).toEqual([]);
      // demo@me's addresses, as the docs show them.
      expect((await json<SearchBody>('/api/wallet/bc1qdemo0000000000000000000000000000000')).body.names).toEqual([
        'demo@me',
      ]);
      const eth = await json<SearchBody>('/api/wallet/0x0000000000000000000000000000000000de0000');
      expect(eth.body.names).toEqual(['demo@me']);
    });

    it.skipIf(GRAPHQL_PATH_RERUN)('pages with cursors and refuses bad ones', async () => {
      const pages = await allPages(`/api/wallet/${EVM}`, 2);
      expect(pages.flat()).toEqual(evmHolders);
      const page = await json<SearchBody>(`/api/wallet/${EVM}?limit=1`);
      // Bound to the address (in its matching form): another case of the same address is the same query.
      expect((await get(`/api/wallet/${EVM.toLowerCase()}?cursor=${page.body.nextCursor}`)).status).toBe(200);
      expect((await get(`/api/wallet/${SOL}?cursor=${page.body.nextCursor}`)).status).toBe(400);
      for (const query of ['limit=0', 'limit=x', 'cursor=zzz']) {
        const response = await get(`/api/wallet/${EVM}?${query}`);
        expect(response.status, query).toBe(400);
      }
      const long = await get(`/api/wallet/${'x'.repeat(257)}`);
      expect(long.status).toBe(400);
      expect(await long.json()).toEqual({
        error: 'Invalid address, expected 1 to 256 characters without control characters',
      });
      expect((await get('/api/wallet/a%00b')).status).toBe(400);
      // Percent-encoding that is not UTF-8 (a lone surrogate here): still about the address.
      const undecodable = await get('/api/wallet/%ED%A0%80');
      expect(undecodable.status).toBe(400);
      expect(await undecodable.json()).toEqual({
        error: 'Invalid address, expected 1 to 256 characters without control characters',
      });
    });

    it('answers in GraphQL with the profiles, and validates like REST', async () => {
      const query = `query W($address: String!, $first: Int, $after: String) {
        profilesByWallet(address: $address, first: $first, after: $after) {
          edges { cursor node { name wallet(symbol: "ETH") { address chain accountId } } }
          pageInfo { hasNextPage endCursor }
        }
      }`;
      const result = await graphql(query, { address: EVM.toLowerCase(), first: 100 });
      expect(result.errors).toBeUndefined();
      const connection = result.data?.profilesByWallet as {
        edges: Array<{ node: { name: string; wallet: { chain: string } | null } }>;
      };
      expect(connection.edges.map((edge) => edge.node.name)).toEqual(evmHolders);
      expect(connection.edges.every((edge) => edge.node.wallet?.chain === 'eip155:1')).toBe(true);
      for (const variables of [
        { address: '' },
        { address: 'a\u0000' },
        { address: EVM, first: -1 },
        { address: EVM, after: '' },
      ]) {
        const bad = await graphql(query, variables);
        expect(bad.errors?.[0]?.extensions?.code, JSON.stringify(variables)).toBe('BAD_USER_INPUT');
      }
    });
  });

  describe.skipIf(GRAPHQL_PATH_RERUN)('the wallet index', () => {
    const address = '0x00000000000000000000000000000000000000AA';
    const profileLine = (name: string, crypto: Record<string, string> | undefined) =>
      JSON.stringify({
        kind: 'profile',
        name,
        creatorEmail: 'maker@example.com',
        records: crypto === undefined ? {} : { '8': { type: 'crypto', value: crypto } },
      });
    const holders = async (of: string) => (await json<SearchBody>(`/api/wallet/${of}`)).body.names;

    it('follows imports that add, change and remove addresses, and deletes', async () => {
      expect((await importLines(handle.db, [profileLine('w1@other', { eth: address })])).ok).toBe(true);
      expect(await holders(address)).toEqual(['w1@other']);
      // Replaced whole: the old address goes, the new one comes.
      expect((await importLines(handle.db, [profileLine('w1@other', { btc: 'bc1qnew' })])).ok).toBe(true);
      expect(await holders(address)).toEqual([]);
      expect(await holders('bc1qnew')).toEqual(['w1@other']);
      expect((await importLines(handle.db, [profileLine('w1@other', undefined)])).ok).toBe(true);
      expect(await holders('bc1qnew')).toEqual([]);
      // Writers other than the importer: plain SQL.
      expect((await importLines(handle.db, [profileLine('w2@other', { eth: address })])).ok).toBe(true);
      await handle.db.execute(
        sql`update records set value = '{"eth":"0x00000000000000000000000000000000000000BB"}' where profile_id = (select id from profiles where name = 'w2@other')`,
      );
      expect(await holders(address)).toEqual([]);
      expect(await holders('0x00000000000000000000000000000000000000bb')).toEqual(['w2@other']);
      await handle.db.execute(sql`delete from profiles where name = 'w2@other'`);
      expect(await holders('0x00000000000000000000000000000000000000bb')).toEqual([]);
      await handle.db.execute(sql`delete from profiles where name = 'w1@other'`);
    });

    it('indexes nothing of a rejected import', async () => {
      const lines = [profileLine('w3@other', { eth: address }), '{"kind":"profile","name":"not a name"}'];
      const report = await importLines(handle.db, lines);
      expect(report.ok).toBe(false);
      expect(await holders(address)).toEqual([]);
    });

    it('keeps writes that hold values PostgreSQL cannot read as text, leaving those entries out', async () => {
      const id = sql`(select id from profiles where name = 'a-b@disc')`;
      await handle.db.execute(
        sql`insert into records values (${id}, 90, 'crypto', ${`{"eth":"0xDUP","eth":"0xLAST","nul":"a\\u0000","lone":"\\ud800","num":5,"empty":"","long":"${'x'.repeat(257)}"}`}::json)`,
      );
      const indexed = (await walletRows()).filter((row) => row.name === 'a-b@disc');
      // A key given twice counts with its last value, as JSON.parse reads it.
      expect(indexed).toEqual([{ name: 'a-b@disc', symbol: 'eth', address_key: '0xlast' }]);
      await handle.db.execute(sql`delete from records where profile_id = ${id} and key = 90`);
      expect((await walletRows()).filter((row) => row.name === 'a-b@disc')).toEqual([]);
    });

    it('keeps the index through bulk imports that pass or fail', async () => {
      const bulkDb = await createTestDatabase(kind);
      const bulk = await bulkDb.open();
      try {
        const holdersThere = async (of: string) =>
          rows<{ name: string }>(
            await bulk.db.execute(sql`select name from wallet_addresses where address_key = ${walletAddressKey(of)}`),
          ).map((row) => row.name);
        expect((await importLines(bulk.db, FIXTURES, { bulk: true })).ok).toBe(true);
        expect((await importLines(bulk.db, [profileLine('w5@other', { eth: address })], { bulk: true })).ok).toBe(true);
        expect(await holdersThere(address)).toEqual(['w5@other']);
        const rejected = await importLines(bulk.db, [profileLine('w6@other', { eth: address }), '{"kind":"nope"}'], {
          bulk: true,
        });
        expect(rejected.ok).toBe(false);
        expect(await holdersThere(address)).toEqual(['w5@other']);
      } finally {
        await bulk.close();
        await bulkDb.drop();
      }
    });

    it('matches addresses as walletAddressKey does', async () => {
      const samples = fc.sample(
        fc.oneof(
          fc.string({ unit: 'grapheme', maxLength: 20 }),
          fc.string({ unit: 'grapheme-ascii', maxLength: 20 }).map((text) => `0x${text}`),
          fc.string({ unit: 'grapheme', maxLength: 20 }).map((text) => `0X${text}`),
          fc.constantFrom('0xÄÖÜ', '0XıİAZ', 'ǅ0x', '0x'),
        ),
        300,
      );
      const inputs = samples.filter((text) => !text.includes('\u0000'));
      const answer = rows<{ keys: string[] }>(
        await handle.db.execute(
          sql`select array_agg(wallet_address_key(input) order by position) as keys
              from json_array_elements_text(${JSON.stringify(inputs)}::json) with ordinality as t(input, position)`,
        ),
      );
      expect(answer[0]?.keys).toEqual(inputs.map(walletAddressKey));
    });

    it.runIf(kind === 'postgres')('shows no name of an import that has not committed', async () => {
      const line = profileLine('w4@other', { eth: address });
      let seenDuring: string[] | undefined;
      await handle.db.transaction(async (tx) => {
        await importLines(tx, [line]);
        seenDuring = await holders(address);
      });
      expect(seenDuring).toEqual([]);
      expect(await holders(address)).toEqual(['w4@other']);
      await handle.db.execute(sql`delete from profiles where name = 'w4@other'`);
    });

    it('indexes the data that was there before the migration', async () => {
      // The migrations as they were before discovery: the first one only.
      await withOlderSchema(
        kind,
        (tag) => tag === '0000_init',
        async (old) => {
          // Today's importer also writes the name skeletons (migration 0003) and the records text
          // (0005), for which that schema has no columns, and counts its change-log entries (0006):
          // it gets them for the import only.
          await old.db.execute(sql`alter table profiles add column local_skeleton text, add column records_json text`);
          await old.db.execute(sql`create table change_log (xid bigint)`);
          await seedDemoData(old.db);
          expect((await importLines(old.db, FIXTURES)).ok).toBe(true);
          await old.db.execute(sql`alter table profiles drop column local_skeleton, drop column records_json`);
          await old.db.execute(sql`drop table change_log`);
          await old.migrate();
          const backfilled = rows(
            await old.db.execute(
              sql`select name, symbol, address_key from wallet_addresses order by name collate "C", symbol, address_key`,
            ),
          );
          expect(backfilled.length).toBeGreaterThan(5);
          // Exactly what the triggers made of the same data in this suite's database.
          const fresh = (await walletRows()).filter((row) => !row.name.startsWith('w'));
          expect(backfilled).toEqual(fresh);
        },
      );
    });
  });

  describe.skipIf(GRAPHQL_PATH_RERUN)('query plans', () => {
    // biome-ignore lint/suspicious/noDuplicateTestHooks: describe.skipIf(…) opens a block of its own, which Biome does not read as one
    beforeAll(async () => {
      // Enough rows that the planner would rather scan a table than an index if the index did not fit.
      expect(await importGenerated(handle.db, { profiles: 6000, seed: 5, namespaces: 3 })).toBe(true);
    }, 120_000);

    const plan = (query: { getSQL(): ReturnType<typeof sql> }) => queryPlan(handle.db, query);

    it('search reads a range of the name index, already in order', async () => {
      const all = await plan(
        namesByPrefixQuery(handle.db, { prefix: 'al', namespace: undefined, after: undefined, limit: 21 }),
      );
      expect(all).toContain('profiles_name_c_idx');
      const inNamespace = await plan(
        namesByPrefixQuery(handle.db, { prefix: 'al', namespace: 'disc', after: 'al@disc', limit: 21 }),
      );
      expect(inNamespace).toContain('profiles_namespace_name_c_idx');
      for (const text of [all, inNamespace]) {
        expect(text).not.toMatch(/Seq Scan|Sort/);
      }
    });

    it('the reverse lookup reads the address index, in order when an address has many names', async () => {
      const rare = await plan(
        namesByWalletQuery(handle.db, { addressKey: walletAddressKey(EVM), after: undefined, limit: 21 }),
      );
      expect(rare).toContain('wallet_addresses_lookup_idx');
      expect(rare).not.toContain('Seq Scan');
      // An address that thousands of profiles list: a page must not sort them all.
      await handle.db.execute(
        sql`insert into records (profile_id, key, type, value)
            select id, 77, 'crypto', '{"eth":"0x000000000000000000000000000000000000f00d"}' from profiles`,
      );
      await handle.db.execute(sql`analyze wallet_addresses`);
      const popular = await plan(
        namesByWalletQuery(handle.db, {
          addressKey: '0x000000000000000000000000000000000000f00d',
          after: 'a@disc',
          limit: 21,
        }),
      );
      expect(popular).toContain('wallet_addresses_lookup_idx');
      expect(popular).not.toMatch(/Seq Scan|Sort/);
      await handle.db.execute(sql`delete from records where key = 77`);
    });
  });

  describe('budgets and caching', () => {
    it('charges one point per name returned, at least one, and cuts a page to the points left', async () => {
      const limited = await startTestServer(handle, { PROFILE_LIMIT: '6' });
      try {
        const remaining = (response: Response) => Number(response.headers.get('ratelimit-remaining'));
        const three = await fetch(`${limited.url}/api/search?prefix=a&namespace=disc&limit=3`);
        expect(((await three.json()) as SearchBody).names).toHaveLength(3);
        expect(remaining(three)).toBe(3);
        const none = await fetch(`${limited.url}/api/search?prefix=zzz`);
        expect(remaining(none)).toBe(2);
        // Two points left: a page of two, to be continued later.
        const cut = await fetch(`${limited.url}/api/wallet/${EVM}?limit=10`);
        const body = (await cut.json()) as SearchBody;
        expect(body.names).toEqual(evmHoldersOf().slice(0, 2));
        expect(body.nextCursor).not.toBeNull();
        expect(remaining(cut)).toBe(0);
        const refused = await fetch(`${limited.url}/api/wallet/${EVM}?cursor=${body.nextCursor}`);
        expect(refused.status).toBe(429);
        expect(refused.headers.get('retry-after')).not.toBeNull();
        const check = await graphql('{ nameCheck(name: "demo@me") { exists } }', {}, limited.url);
        expect(check.errors?.[0]?.extensions?.code).toBe('RATE_LIMITED');
      } finally {
        await limited.close();
      }
    });

    it.skipIf(GRAPHQL_PATH_RERUN)(
      'gives REST answers an ETag and the profile Cache-Control, and 304 on a match',
      async () => {
        const first = await get('/api/search?prefix=a');
        const etag = first.headers.get('etag');
        expect(etag).toMatch(/^"[\w-]+"$/);
        expect(first.headers.get('cache-control')).toBe('public, max-age=60');
        const again = await get('/api/search?prefix=a', { headers: { 'If-None-Match': etag ?? '' } });
        expect(again.status).toBe(304);
        const head = await get(`/api/wallet/${EVM}`, { method: 'HEAD' });
        expect(head.status).toBe(200);
        expect(await head.text()).toBe('');
      },
    );

    it.skipIf(GRAPHQL_PATH_RERUN)(
      'lets browsers of any origin call the REST paths, and refuses other methods with 405',
      async () => {
        const preflight = await get('/api/search?prefix=a', {
          method: 'OPTIONS',
          headers: { Origin: 'https://app.example', 'Access-Control-Request-Method': 'GET' },
        });
        expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
        const answer = await get(`/api/wallet/${EVM}`, { headers: { Origin: 'https://app.example' } });
        expect(answer.headers.get('access-control-allow-origin')).toBe('*');
        const post = await get('/api/search?prefix=a', { method: 'POST' });
        expect(post.status).toBe(405);
        expect(post.headers.get('allow')).toBe('GET, HEAD');
      },
    );

    it('lets GraphQL GET answers of discovery be cached like profile answers', async () => {
      const query = encodeURIComponent(
        `{ searchProfiles(prefix: "a") { edges { cursor } } profilesByWallet(address: "${EVM}") { edges { cursor } } nameCheck(name: "demo@me") { exists } }`,
      );
      const response = await get(`/graphql?query=${query}`, { headers: { accept: 'application/json' } });
      expect(response.status).toBe(200);
      expect(response.headers.get('cache-control')).toBe('public, max-age=60');
      expect(response.headers.get('etag')).not.toBeNull();
    });
  });

  describe('wallets and the name check in GraphQL', () => {
    it('gives demo@me its wallets in stored order with CAIP ids', async () => {
      const result = await graphql(
        '{ profile(name: "demo@me") { wallets { symbol address chain accountId } sol: wallet(symbol: "SOL") { accountId } none: wallet(symbol: "doge") { address } } }',
      );
      expect(result.errors).toBeUndefined();
      const profile = result.data?.profile as { wallets: unknown[]; sol: { accountId: string }; none: null };
      expect(profile.wallets).toEqual([
        {
          symbol: 'btc',
          address: 'bc1qdemo0000000000000000000000000000000',
          chain: 'bip122:000000000019d6689c085ae165831e93',
          accountId: 'bip122:000000000019d6689c085ae165831e93:bc1qdemo0000000000000000000000000000000',
        },
        {
          symbol: 'eth',
          address: '0x0000000000000000000000000000000000dE0000',
          chain: 'eip155:1',
          accountId: 'eip155:1:0x0000000000000000000000000000000000dE0000',
        },
        {
          symbol: 'sol',
          address: 'DemoSo1ana111111111111111111111111111111111',
          chain: 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp',
          accountId: 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp:DemoSo1ana111111111111111111111111111111111',
        },
      ]);
      expect(profile.sol.accountId).toBe(
        'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp:DemoSo1ana111111111111111111111111111111111',
      );
      expect(profile.none).toBeNull();
    });

    it('checks names: canonical form, validity and reason, existence, warnings', async () => {
      const result = await graphql(`{
        taken: nameCheck(name: "Demo@ME") { input canonical valid reason exists warnings }
        free: nameCheck(name: "nobody@me") { valid exists }
        invalid: nameCheck(name: "demo@") { canonical valid reason exists }
        mixed: nameCheck(name: "p\\u0430ypal@me") { valid exists warnings }
      }`);
      expect(result.errors).toBeUndefined();
      expect(result.data).toEqual({
        taken: { input: 'Demo@ME', canonical: 'demo@me', valid: true, reason: null, exists: true, warnings: [] },
        free: { valid: true, exists: false },
        invalid: {
          canonical: 'demo@',
          valid: false,
          reason: 'The namespace is empty; it needs 1 to 63 characters.',
          exists: false,
        },
        mixed: {
          valid: true,
          exists: false,
          warnings: [
            'The local part mixes letters of the Latin and Cyrillic scripts, so it can look like a different name.',
          ],
        },
      });
    });
  });

  it('runs the GraphiQL discovery tabs on the demo data without errors', async () => {
    const search = await graphql(GRAPHIQL_SEARCH_QUERY);
    expect(search.errors).toBeUndefined();
    expect(JSON.stringify(search.data)).toContain('"name":"demo@me"');
    const wallet = await graphql(GRAPHIQL_WALLET_QUERY);
    expect(wallet.errors).toBeUndefined();
    expect(JSON.stringify(wallet.data)).toContain('"accountId":"eip155:1:0x0000000000000000000000000000000000dE0000"');
    const check = await graphql(GRAPHIQL_NAME_CHECK_QUERY);
    expect(check.errors).toBeUndefined();
    expect(check.data).toMatchObject({
      taken: { exists: true },
      lookalike: {
        valid: true,
        exists: false,
        warnings: [
          expect.stringContaining('Latin and Cyrillic'),
          'The name can be taken for the existing name "demo@me".',
        ],
        confusableWith: ['demo@me'],
      },
      invalid: { valid: false },
    });
  });

  function evmHoldersOf(): string[] {
    return DISC_NAMES.filter((_, index) => index % 3 === 0)
      .map((local) => `${local}@disc`)
      .sort(codePointOrder);
  }
});
