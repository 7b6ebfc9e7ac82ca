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
import { eventually } from './support/eventually.js';

const NAMESPACE = { kind: 'namespace', name: 'news', ownerEmail: 'news-owner@example.com' };
const profile = (local: string, description = `About ${local}`) => ({
  kind: 'profile',
  name: `${local}@news`,
  creatorEmail: `${local}@example.org`,
  description,
  records: { '1': { type: 'name', value: local } },
});
const SMALL_BATCHES: ImportOptions = { batchSize: 5 };
/** The control import's profile, in a namespace of its own, removed again once it was heard. */
const CONTROL_NAME = 'control@control';
const CONTROL_LINES = ndjson(
  { kind: 'namespace', name: 'control', ownerEmail: 'control-owner@example.com' },
  { kind: 'profile', name: CONTROL_NAME, creatorEmail: 'control@example.org' },
);
const CONTROL_REMOVAL = ndjson({ kind: 'remove', namespace: 'control' });

interface Listener {
  readonly payloads: string[];
  /**
   * What was announced before a control import made now (a profile of its own), once the
   * control's announcement and its commit position have arrived: notifications arrive in commit
   * order, so nothing announced before the control can still be on its way. The control is
   * removed again, and heard removed, before it returns (an import with --replace-all would
   * remove it too). Takes what it returns off `payloads`, with the control's own.
   */
  settled(): Promise<string[]>;
  stop(): Promise<void>;
}

/** Where the control's announcement and then its commit position are in `payloads`, once both are. */
function controlIn(payloads: readonly string[]): { announced: number; committed: number } | undefined {
  const notifications = payloads.map(parseChangePayload);
  const announced = notifications.findIndex((n) => n.kind === 'names' && n.names.includes(CONTROL_NAME));
  const control = notifications[announced];
  if (control === undefined || control.kind !== 'names') return undefined;
  const committed = notifications.findIndex(
    (n, index) => index > announced && n.kind === 'committed' && n.id === control.id,
  );
  return committed < 0 ? undefined : { announced, committed };
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
    async settled() {
      const heard = async (lines: string[], what: string) => {
        const report = await importLines(database.handle.db, lines);
        expect(report.ok).toBe(true);
        const control = await eventually(() => controlIn(payloads), { what, withinMs: 10_000, everyMs: 20 });
        return payloads.splice(0, control.committed + 1).slice(0, control.announced);
      };
      const before = await heard(CONTROL_LINES, 'the control import heard');
      await heard(CONTROL_REMOVAL, 'the removal of the control heard');
      return before;
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
    const payloads = await listener.settled();
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
    expect(announced(await listener.settled())).toEqual([]);
  });

  it('announces removed profiles by name, those of a removed namespace and of --replace-all included', async () => {
    const removed = await importLines(
      database.handle.db,
      ndjson({ kind: 'remove', name: 'Kept@NEWS' }, { kind: 'remove', name: 'never@news' }),
    );
    expect(removed).toMatchObject({ ok: true, profilesRemoved: 1, removalsOfNothing: 1 });
    expect(announced(await listener.settled())).toEqual(['kept@news']);

    const replaced = await importLines(database.handle.db, ndjson(NAMESPACE, profile('edited')), { replaceAll: true });
    expect(replaced).toMatchObject({ ok: true, profilesRemoved: 1 });
    expect(announced(await listener.settled())).toEqual(['recreated@news']);

    const namespace = await importLines(database.handle.db, ndjson({ kind: 'remove', namespace: 'news' }));
    expect(namespace).toMatchObject({ ok: true, namespacesRemoved: 1, profilesRemoved: 1 });
    expect(announced(await listener.settled())).toEqual(['edited@news']);
  });

  it('announces nothing for a dry run', async () => {
    const report = await importLines(
      database.handle.db,
      ndjson({ kind: 'remove', name: 'kept@news' }, { ...profile('edited'), description: 'Edited' }),
      { dryRun: true, replaceAll: true },
    );
    expect(report).toMatchObject({ ok: true, dryRun: true, profilesRemoved: 2, profilesChanged: 1 });
    expect(announced(await listener.settled())).toEqual([]);
  });

  it('announces nothing when the import changes nothing', async () => {
    const report = await importLines(database.handle.db, ndjson(NAMESPACE, profile('kept'), profile('edited')));
    expect(report).toMatchObject({ ok: true, namespacesChanged: 0, profilesChanged: 0 });
    expect(announced(await listener.settled())).toEqual([]);
  });

  it(`announces everything once, not a list, past ${MAX_NAMED_CHANGES} changed profiles`, async () => {
    const many = Array.from({ length: MAX_NAMED_CHANGES + 1 }, (_, index) => profile(`bulk${index}`));
    const report = await importLines(database.handle.db, ndjson(...many), { batchSize: 500 });
    expect(report.profilesChanged).toBe(MAX_NAMED_CHANGES + 1);
    expect(announced(await listener.settled())).toEqual([EVERYTHING]);
  });

  it('names every one of exactly MAX_NAMED_CHANGES profiles, over as many notifications as it takes', async () => {
    const many = Array.from({ length: MAX_NAMED_CHANGES }, (_, index) => profile(`many${index}`));
    await importLines(database.handle.db, ndjson(...many), { batchSize: 500 });
    // 2000 names do not fit one payload (PostgreSQL takes less than 8000 bytes): 4, and the
    // import's commit position after them.
    const payloads = await listener.settled();
    expect(payloads).toHaveLength(5);
    expect(new Set(changeIds(payloads).changes).size).toBe(1);
    expect(announced(payloads)).toEqual(many.map((line) => line.name).sort());
  });

  it('announces everything when a namespace gets a new owner: the owner check of all its profiles changes', async () => {
    await importLines(database.handle.db, ndjson({ ...NAMESPACE, ownerEmail: 'new-owner@example.com' }));
    expect(announced(await listener.settled())).toEqual([EVERYTHING]);
  });

  it('announces the demo data when seeding, which goes through the importer', async () => {
    await emptyDatabase(database.handle.db);
    await seedDemoData(database.handle.db);
    const names = announced(await listener.settled());
    expect(names).toHaveLength(7);
    expect(names).toContain('demo@me');
    expect(names).toContain('алиса@мир');
  });
});
