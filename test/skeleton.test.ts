/**
 * The UTS #39 skeleton (src/names/skeleton.ts): look-alikes share one, the ASCII shortcut gives
 * exactly what the definition gives, and the data is the confusables.txt version the stored
 * skeletons were computed with.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { lookAlikesWarning } from '../src/names/name-check.js';
import { CONFUSABLES_VERSION, generalSkeleton, skeleton } from '../src/names/skeleton.js';

describe('skeleton', () => {
  it('is the same for names written in look-alike letters of another script', () => {
    expect(skeleton('сосо')).toBe('coco'); // all Cyrillic
    expect(skeleton('cоco')).toBe('coco'); // one Cyrillic о
    expect(skeleton('раураl')).toBe(skeleton('paypal'));
    expect(skeleton('ｐａｙｐａｌ')).toBe(skeleton('paypal')); // fullwidth
    expect(skeleton('𝐩𝐚𝐲𝐩𝐚𝐥')).toBe(skeleton('paypal')); // mathematical bold
    expect(skeleton('rn')).toBe(skeleton('m'));
    expect(skeleton('l1')).toBe('ll');
  });

  it('tells apart names that do not look alike', () => {
    expect(skeleton('coco')).not.toBe(skeleton('cocoa'));
    expect(skeleton('zoë')).not.toBe(skeleton('zoe'));
    expect(skeleton('алиса')).not.toBe(skeleton('alisa'));
  });

  it('decomposes before and after mapping, and drops default-ignorable characters', () => {
    expect(skeleton('é')).toBe('e\u0301');
    expect(skeleton('e\u0301')).toBe(skeleton('é'));
    expect(skeleton('co\u00adco')).toBe('coco'); // soft hyphen
    expect(skeleton('co\u200bco')).toBe('coco'); // zero width space
  });

  it('takes its ASCII shortcut only where the definition gives the same', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary-ascii', maxLength: 40 }), (text) => {
        expect(skeleton(text)).toBe(generalSkeleton(text));
      }),
      { numRuns: 2000 },
    );
    const printable = Array.from({ length: 128 }, (_, code) => String.fromCharCode(code)).join('');
    expect(skeleton(printable)).toBe(generalSkeleton(printable));
  });

  it('maps with the package data, which is confusables.txt of the version the stored skeletons use', () => {
    const require = createRequire(import.meta.url);
    const data = require('unhomoglyph/data.json') as Record<string, string>;
    // One entry per line of confusables.txt 13.0.0, each the prototype of one code point.
    expect(Object.keys(data)).toHaveLength(6311);
    expect(Object.keys(data).every((source) => [...source].length === 1)).toBe(true);
    expect(new Map(Object.entries(data)).get('\u0441')).toBe('c'); // Cyrillic с
    // A new version of the data changes skeletons: it needs CONFUSABLES_VERSION changed and a
    // migration that sets profiles.local_skeleton to null, which the backfill then recomputes
    // (docs/discovery.md).
    const manifest = JSON.parse(readFileSync(require.resolve('unhomoglyph/package.json'), 'utf8')) as {
      version: string;
    };
    expect({ package: manifest.version, confusables: CONFUSABLES_VERSION }).toEqual({
      package: '1.0.6',
      confusables: '13.0.0',
    });
  });
});

describe('look-alikes warning', () => {
  it('names the existing look-alikes in one sentence', () => {
    expect(lookAlikesWarning([])).toBeNull();
    expect(lookAlikesWarning(['coco@acme'])).toBe('The name can be taken for the existing name "coco@acme".');
    expect(lookAlikesWarning(['a@x', 'b@x', 'c@x'])).toBe(
      'The name can be taken for the existing names "a@x", "b@x" and "c@x".',
    );
  });
});
