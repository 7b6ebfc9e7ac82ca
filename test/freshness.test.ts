/**
 * What a process must wait for before it reads changed data on a replica (src/db/freshness.ts)
 * and how WAL positions read and compare (src/db/wal-position.ts).
 */
import { describe, expect, it } from 'vitest';
import { Freshness } from '../src/db/freshness.js';
import { formatWalPosition, parseWalPosition } from '../src/db/wal-position.js';

const at = (text: string) => parseWalPosition(text) ?? -1n;

describe('WAL positions', () => {
  it('read PostgreSQL text and compare as numbers', () => {
    expect(at('16/B374D848')).toBe(0x16b374d848n);
    expect(at('0/1') < at('0/10')).toBe(true);
    expect(at('1/0') > at('0/FFFFFFFF')).toBe(true);
    expect(formatWalPosition(at('16/B374D848'))).toBe('16/B374D848');
    for (const bad of [null, undefined, '', '16', '16/', 'x/1', '1/2/3', '123456789/0']) {
      expect(parseWalPosition(bad)).toBeUndefined();
    }
  });
});

describe('freshness', () => {
  it('reads anywhere until a change is heard', () => {
    expect(new Freshness().requiredPosition()).toBe(0n);
  });

  it('sends reads to the primary from a change heard until its writer tells its commit position', () => {
    const freshness = new Freshness();
    freshness.heard('import-1', 1000);
    expect(freshness.requiredPosition()).toBeUndefined();
    freshness.committed('import-1', at('0/3000'));
    expect(freshness.requiredPosition()).toBe(at('0/3000'));
  });

  it('takes a heartbeat sent after the change was heard as its position, and none sent before', () => {
    const freshness = new Freshness();
    freshness.heard(undefined, 1000); // a hand-written pg_notify(…, '*')
    freshness.heard('import-2', 1000); // a writer that died before its second notification
    freshness.heartbeat(1000, at('0/100')); // sent in the same millisecond: may have run before the commit
    expect(freshness.requiredPosition()).toBeUndefined();
    freshness.heartbeat(1001, at('0/200'));
    expect(freshness.requiredPosition()).toBe(at('0/200'));
  });

  it('keeps the newest position: a late, older one does not lower it', () => {
    const freshness = new Freshness();
    freshness.heard('a', 10);
    freshness.heard('b', 11);
    freshness.committed('b', at('0/900'));
    expect(freshness.requiredPosition()).toBeUndefined(); // a is still pending
    freshness.committed('a', at('0/500'));
    expect(freshness.requiredPosition()).toBe(at('0/900'));
  });
});
