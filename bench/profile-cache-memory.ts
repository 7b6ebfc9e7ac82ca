/**
 * What one entry of the profile cache holds, by part: `npm run bench:cache-memory`.
 *
 * Reads N random profiles of the benchmark's database (`BENCH_DATABASE_URL`, default the
 * `nps_bench` database `npm run bench` loads) with the service's own statement, makes them into
 * `Profile`s as the loaders do, then builds what a cached profile comes to hold one part at a
 * time — the REST document, the records split for GraphQL, every record's value read, a kept
 * GraphQL answer of the benchmark's selection (which lets the split records go) — and
 * reports the heap (and buffers) each part added per profile, measured after full collections.
 * The profile cache's size (PROFILE_CACHE_SIZE) times the total is what a full cache holds
 * (bench/README.md, "Issue 25, sixth round"; docs/decisions.md, "The profile cache's default size").
 *
 *   npm run bench:cache-memory -- [--profiles 10000]   (--help says more)
 */
import { parse } from 'graphql';
import { openDatabase } from '../src/db/database.js';
import { sql } from '../src/db/drizzle.js';
import { findProfilesByNames } from '../src/db/queries.js';
import { profiles as profilesTable } from '../src/db/schema.js';
import { answerPlanOf } from '../src/graphql/execution/profile-answers.js';
import { schema } from '../src/graphql/schema/schema.js';
import { Profile, type ProfileRow } from '../src/profiles/profile.js';
import { benchCommandLine, wholeNumberOption } from './support.js';

const USAGE = `
npm run bench:cache-memory -- [--profiles <n>]   what a cached profile holds in memory, by part
  --profiles <n>   random profiles of BENCH_DATABASE_URL (default nps_bench) to measure (default 10000)
`;
const { values } = benchCommandLine({ options: { profiles: { type: 'string', default: '10000' } } }, USAGE);
const count = wholeNumberOption('--profiles', values.profiles, 1, USAGE);

/** The benchmark's GraphQL selection, the key its answers are kept under here. */
const SELECTION = 'name description image level records { key type raw }';

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc (npm run bench:cache-memory does)');
const collect: () => void = gc;

interface Reading {
  heap: number;
  buffers: number;
}

function reading(): Reading {
  collect();
  collect();
  const usage = process.memoryUsage();
  return { heap: usage.heapUsed, buffers: usage.arrayBuffers };
}

const url = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/nps_bench';

/** `count` random profiles' rows, read with the service's statement (a function: nothing else of the read stays reachable). */
async function readRows(): Promise<ProfileRow[]> {
  const database = await openDatabase({ url, dataDir: '' });
  try {
    const names = await database.db
      .select({ name: profilesTable.name })
      .from(profilesTable)
      .orderBy(sql`random()`)
      .limit(count);
    if (names.length < count) throw new Error(`${url} holds ${names.length} profiles; run npm run bench first`);
    const read: ProfileRow[] = [];
    for (let at = 0; at < names.length; at += 500) {
      read.push(
        ...(await findProfilesByNames(
          database.db,
          names.slice(at, at + 500).map(({ name }) => name),
        )),
      );
    }
    return read;
  } finally {
    await database.close();
  }
}

const rows = await readRows();

// `rows` keeps the rows' strings referenced throughout, so each step counts only what it adds.
const parts: Array<[string, Reading]> = [];
// The closed connections' last callbacks and finalizers run first, or the first part counts them.
await new Promise((resolve) => setTimeout(resolve, 200));
let before = reading();
const step = (part: string, build: () => void): void => {
  build();
  const after = reading();
  parts.push([part, { heap: after.heap - before.heap, buffers: after.buffers - before.buffers }]);
  before = after;
};

const cached: Profile[] = [];
// One-byte strings: about a byte a character and a header of 16 B each (an estimate, not a reading).
let rowStrings = 0;
for (const row of rows) {
  for (const value of Object.values(row)) if (typeof value === 'string') rowStrings += value.length + 16;
}
step("`Profile` objects, kept long as the cache keeps them (their strings are the row's, above)", () => {
  for (const row of rows) {
    const profile = new Profile(row);
    profile.markKeptByCache();
    cached.push(profile);
  }
});
step('REST document (`document`)', () => {
  for (const profile of cached) void profile.document;
});
let records = 0;
let strings = 0;
step('records split for GraphQL (`records`)', () => {
  for (const profile of cached) records += profile.records.length;
});
step('every record value read (`raw`)', () => {
  for (const profile of cached) {
    for (const record of profile.records) if (typeof record.raw === 'string') strings += 1;
  }
});

// The answer of `profile(name:) { name description image level records { key type raw } }`,
// written as src/graphql/execution/profile-answers.ts writes and keeps it for a cached profile.
const plan = answerPlanOf(schema, parse(`query P($n: String!) { profile(name: $n) { ${SELECTION} } }`), undefined);
step("a kept GraphQL answer of the benchmark's selection, the split records let go (`keepAnswer`)", () => {
  if (plan === undefined) throw new Error(`no answers are kept for ${SELECTION}`);
  for (const profile of cached) {
    const answer = plan.write(profile, {});
    if (answer === undefined) throw new Error(`the answer of ${profile.name} was not written`);
    profile.keepAnswer(plan.key, answer);
  }
});

const perProfile = (bytes: number): string => String(Math.round(bytes / cached.length));
const lines = [
  `${cached.length} random profiles of ${new URL(url).pathname.slice(1)}: ${(records / cached.length).toFixed(1)} records each, ${(strings / cached.length).toFixed(1)} of them strings`,
  '',
  '| part | heap B / profile | buffers B / profile |',
  '|---|---|---|',
  `| the row's strings (estimated: characters + 16 B a string) | ${perProfile(rowStrings)} | 0 |`,
  ...parts.map(([part, { heap, buffers }]) => `| ${part} | ${perProfile(heap)} | ${perProfile(buffers)} |`),
];
const total = parts.reduce((sum, [, { heap, buffers }]) => sum + heap + buffers, rowStrings);
lines.push(
  '',
  `total about ${perProfile(total)} B a profile: ${(((total / cached.length) * 10_000) / 2 ** 20).toFixed(1)} MB for 10,000 cached profiles`,
);
process.stdout.write(`${lines.join('\n')}\n`);
