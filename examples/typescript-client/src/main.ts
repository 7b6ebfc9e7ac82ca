/**
 * A tour of the service for app developers: a profile lookup, a batch and an owner check, each
 * over REST and over GraphQL, then live updates of a profile. Run with SERVICE_URL and API_KEY
 * set (see the README); EXAMPLE_EVENTS=n stops after n live events, otherwise Ctrl-C does.
 */
import { documentId, execute, subscribe } from './graphql-client.js';
import { OwnerCheck, ProfileBatch, ProfileLookup, WatchProfiles } from './operations.js';
import { restClient } from './rest-client.js';
import { settingsFromEnvironment } from './settings.js';

const settings = settingsFromEnvironment();
const NAME = process.env.EXAMPLE_NAME ?? 'demo@me';
const OTHER = 'nobody@me';
const EMAIL = process.env.EXAMPLE_EMAIL ?? 'maker@example.com';

async function overRest(): Promise<void> {
  const rest = restClient(settings);

  const lookup = await rest.GET('/api/{name_id}', { params: { path: { name_id: NAME } } });
  if (lookup.error !== undefined) throw new Error(`REST lookup: ${lookup.response.status} ${lookup.error.error}`);
  console.log(`REST lookup: ${lookup.data.name}: ${lookup.data.description}`);

  const batch = await rest.GET('/api/profiles', { params: { query: { names: [NAME, OTHER] } } });
  if (batch.error !== undefined) throw new Error(`REST batch: ${batch.response.status} ${batch.error.error}`);
  const found = Object.entries(batch.data.profiles).map(
    ([name, profile]) => `${name}=${profile === null ? 'none' : 'found'}`,
  );
  console.log(`REST batch: ${found.join(' ')}`);

  const owner = await rest.GET('/api/owner-check', { params: { query: { email: EMAIL, name: NAME } } });
  if (owner.error !== undefined) throw new Error(`REST owner check: ${owner.response.status} ${owner.error.error}`);
  console.log(`REST owner check: ${owner.data.email} created ${owner.data.name}: ${owner.data.hasCreated}`);
}

async function overGraphQL(): Promise<void> {
  const { profile } = await execute(settings, ProfileLookup, { name: NAME });
  console.log(`GraphQL lookup: ${profile?.name ?? 'none'}, wallets ${profile?.wallets.map((w) => w.symbol).join(',')}`);

  const { profiles } = await execute(settings, ProfileBatch, { names: [NAME, OTHER] });
  console.log(`GraphQL batch: ${profiles.map((found) => found?.name ?? 'none').join(' ')}`);

  const { ownerCheck } = await execute(settings, OwnerCheck, { email: EMAIL, name: NAME });
  console.log(`GraphQL owner check: ${ownerCheck?.email} created ${ownerCheck?.name}: ${ownerCheck?.hasCreated}`);
}

/** Prints each change of NAME's profile; resolves after `limit` events (never without one). */
function watch(limit: number | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = 0;
    const stop = subscribe(
      settings,
      WatchProfiles,
      { names: [NAME] },
      {
        next: ({ profileChanged }) => {
          const now = profileChanged.profile === null ? 'removed' : profileChanged.profile.description;
          console.log(`live: ${profileChanged.name} changed: ${now}`);
          seen += 1;
          if (limit !== undefined && seen >= limit) {
            stop();
            resolve();
          }
        },
        error: (error) => {
          stop();
          reject(error);
        },
        complete: resolve,
      },
    );
    process.once('SIGINT', () => {
      stop();
      resolve();
    });
    console.log(`live: watching ${NAME} (by document id ${documentId(WatchProfiles).slice(0, 19)}…)`);
  });
}

await overRest();
await overGraphQL();
const limit = process.env.EXAMPLE_EVENTS === undefined ? undefined : Number(process.env.EXAMPLE_EVENTS);
await watch(limit);
