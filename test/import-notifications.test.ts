/**
 * Imports announce what they changed (src/db/change-notifications.ts): a LISTENing connection
 * hears the canonical names of exactly the profiles an import inserted or replaced, once it has
 * committed, and nothing of a rejected or unchanged file.
 */
import type { PGlite } from '@electric-sql/pglite';
import postgres from 'postgres';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ImportOptions, importLines } from '../src/data/importer.js';
import { seedDemoData } from '../src/data/seed.js';
import {
  EVERYTHING,
  MAX_NAMED_CHANGES,
  PROFILE_CHANGES_CHANNEL,
  parseChangePayload,
} from '../src/db/change-notifications.js';
import { emptyDatabase, ndjson } from './support/data-files.js';
import { databaseKinds, type SuiteDatabase, useTestDatabase } from './support/databases.js';

const NAMESPACE = { kind: 'namespace', name: 'news', ownerEmail: 'news-owner@example.com' };
const profile = (local: string, description = `About ${local}`) => ({
  kind: 'profile',
  name: `${local}@news`,
  creatorEmail: `${local}@example.org`,
  description,
  records: { '1': { type: 'name', value: local } },
});
const SMALL_BATCHES: ImportOptions = { batchSize: 5 };

interface Listener {
  readonly payloads: string[];
  /** Waits until `count` payloads have arrived (or 10 s have passed), then a little longer. */
  received(count: number): Promise<string[]>;
  stop(): Promise<void>;
}

/**
 * Listens on the change channel: on PGlite through the handle's own PGlite client (one process
 * has the folder), on PostgreSQL through a connection of its own, as a server would.
 */
async function listen(database: SuiteDatabase): Promise<Listener> {
  const payloads: string[] = [];
  const onPayload = (payload: string) => payloads.push(payload);
  let stop: () => Promise<void>;
  if (database.testDb.kind === 'pglite') {
    const client = (database.handle.db as unknown as { $client: PGlite }).$client;
    const unlisten = await client.listen(PROFILE_CHANGES_CHANNEL, onPayload);
    stop = () => unlisten();
  } else {
    const client = postgres(database.testDb.url ?? '', { max: 1, onnotice: () => {} });
    await client.listen(PROFILE_CHANGES_CHANNEL, onPayload);
    stop = () => client.end({ timeout: 5 });
  }
  return {
    payloads,
    async received(count) {
      const deadline = Date.now() + 10_000;
      while (payloads.length < count && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      // A little longer: anything beyond `count` would arrive now.
      await new Promise((resolve) => setTimeout(resolve, 100));
      return payloads;
    },
    stop,
  };
}

/** The names a list of payloads announces, sorted; EVERYTHING stays as it is; commit positions are left out. */
function announced(payloads: readonly string[]): Array<string> {
  return payloads
    .flatMap((payload) => {
      const change = parseChangePayload(payload);
      if (change.kind === 'committed' || change.kind === 'api-key') return [];
      return change.kind === 'everything' ? [EVERYTHING] : change.names;
    })
    .sort();
}

/** Each import announces its change, then the WAL position after its commit, under one id. */
function changeIds(payloads: readonly string[]): { changes: Array<string | undefined>; committed: string[] } {
  const notifications = payloads.map(parseChangePayload);
  return {
    changes: notifications.flatMap((n) => (n.kind === 'committed' || n.kind === 'api-key' ? [] : [n.id])),
    committed: notifications.flatMap((n) => (n.kind === 'committed' ? [n.id] : [])),
  };
}

describe.each(databaseKinds())('change announcements of imports on %s', (kind) => {
  const database = useTestDatabase(kind);
  let listener: Listener;
  beforeEach(async () => {
    await emptyDatabase(database.handle.db);
    await importLines(database.handle.db, ndjson(NAMESPACE, profile('kept'), profile('edited'), profile('recreated')));
    listener = await listen(database);
  });
  afterEach(async () => {
    await listener.stop();
  });

  /** A small import whose announcement shows that anything announced before it has arrived. */
  async function control(): Promise<void> {
    const report = await importLines(database.handle.db, ndjson(profile('control', `control ${Date.now()}`)));
    expect(report.profilesChanged).toBe(1);
  }

  it('announces exactly the inserted and replaced profiles, by canonical name, after the commit', async () => {
    const report = await importLines(
      database.handle.db,
      ndjson(
        profile('kept'), // unchanged: not announced
        { ...profile('edited'), description: 'Edited' },
        { ...profile('recreated'), creatorEmail: 'someone.else@example.org' }, // private change, owner check differs
        { ...profile('Fresh'), name: 'Fresh@NEWS' },
        profile('newer'),
      ),
      SMALL_BATCHES,
    );
    expect(report).toMatchObject({ ok: true, profilesChanged: 4 });
    const payloads = await listener.received(2);
    expect(announced(payloads)).toEqual(['edited@news', 'fresh@news', 'newer@news', 'recreated@news']);
    // The change, then where its commit ends in the WAL (for servers reading replicas), under one id.
    const { changes, committed } = changeIds(payloads);
    expect(changes).toHaveLength(1);
    expect(committed).toEqual(changes);
    expect(payloads).toHaveLength(2);
    const position = parseChangePayload(payloads[1] ?? '');
    expect(position.kind === 'committed' && position.position > 0n).toBe(true);
  });

  it('announces nothing for a rejected file, even when earlier batches were written', async () => {
    const lines = [
      ...ndjson(profile('a1'), profile('a2'), profile('a3'), profile('a4'), profile('a5'), profile('a6')),
      '{',
    ];
    const report = await importLines(database.handle.db, lines, SMALL_BATCHES);
    expect(report.ok).toBe(false);
    await control();
    expect(announced(await listener.received(1))).toEqual(['control@news']);
  });

  it('announces removed profiles by name, those of a removed namespace and of --replace-all included', async () => {
    const removed = await importLines(
      database.handle.db,
      ndjson({ kind: 'remove', name: 'Kept@NEWS' }, { kind: 'remove', name: 'never@news' }),
    );
    expect(removed).toMatchObject({ ok: true, profilesRemoved: 1, removalsOfNothing: 1 });
    expect(announced(await listener.received(2))).toEqual(['kept@news']);

    listener.payloads.length = 0;
    const replaced = await importLines(database.handle.db, ndjson(NAMESPACE, profile('edited')), { replaceAll: true });
    expect(replaced).toMatchObject({ ok: true, profilesRemoved: 1 });
    expect(announced(await listener.received(2))).toEqual(['recreated@news']);

    listener.payloads.length = 0;
    const namespace = await importLines(database.handle.db, ndjson({ kind: 'remove', namespace: 'news' }));
    expect(namespace).toMatchObject({ ok: true, namespacesRemoved: 1, profilesRemoved: 1 });
    expect(announced(await listener.received(2))).toEqual(['edited@news']);
  });

  it('announces nothing for a dry run', async () => {
    const report = await importLines(
      database.handle.db,
      ndjson({ kind: 'remove', name: 'kept@news' }, { ...profile('edited'), description: 'Edited' }),
      { dryRun: true, replaceAll: true },
    );
    expect(report).toMatchObject({ ok: true, dryRun: true, profilesRemoved: 2, profilesChanged: 1 });
    await control();
    expect(announced(await listener.received(1))).toEqual(['control@news']);
  });

  it('announces nothing when the import changes nothing', async () => {
    const report = await importLines(database.handle.db, ndjson(NAMESPACE, profile('kept'), profile('edited')));
    expect(report).toMatchObject({ ok: true, namespacesChanged: 0, profilesChanged: 0 });
    await control();
    expect(announced(await listener.received(1))).toEqual(['control@news']);
  });

  it(`announces everything once, not a list, past ${MAX_NAMED_CHANGES} changed profiles`, async () => {
    const many = Array.from({ length: MAX_NAMED_CHANGES + 1 }, (_, index) => profile(`bulk${index}`));
    const report = await importLines(database.handle.db, ndjson(...many), { batchSize: 500 });
    expect(report.profilesChanged).toBe(MAX_NAMED_CHANGES + 1);
    expect(announced(await listener.received(2))).toEqual([EVERYTHING]);
  });

  it('names every one of exactly MAX_NAMED_CHANGES profiles, over as many notifications as it takes', async () => {
    const many = Array.from({ length: MAX_NAMED_CHANGES }, (_, index) => profile(`many${index}`));
    await importLines(database.handle.db, ndjson(...many), { batchSize: 500 });
    await control();
    // 2000 names do not fit one payload (PostgreSQL takes less than 8000 bytes): 4, and the
    // control; each import's commit position after them.
    const payloads = await listener.received(7);
    expect(payloads).toHaveLength(7);
    expect(new Set(changeIds(payloads).changes).size).toBe(2);
    expect(announced(payloads)).toEqual([...many.map((line) => line.name), 'control@news'].sort());
  });

  it('announces everything when a namespace gets a new owner: the owner check of all its profiles changes', async () => {
    await importLines(database.handle.db, ndjson({ ...NAMESPACE, ownerEmail: 'new-owner@example.com' }));
    expect(announced(await listener.received(2))).toEqual([EVERYTHING]);
  });

  it('announces the demo data when seeding, which goes through the importer', async () => {
    await emptyDatabase(database.handle.db);
    await seedDemoData(database.handle.db);
    const names = announced(await listener.received(2));
    expect(names).toHaveLength(7);
    expect(names).toContain('demo@me');
    expect(names).toContain('алиса@мир');
  });
});
