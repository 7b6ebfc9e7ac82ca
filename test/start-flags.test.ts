/**
 * `npm start` runs the service with the V8 flags of package.json's `config.nodeFlags`
 * (docs/operations.md, "Memory: the V8 flags"). Node refuses to start on a flag its V8 does not
 * know, so a flag renamed or dropped by a V8 upgrade would stop the service from starting at all:
 * each must be one the Node running the tests accepts.
 */
import { describe, expect, it } from 'vitest';
import { runNode } from './support/run-node.js';
import { startFlags } from './support/server-process.js';

describe('the start flags of package.json', () => {
  it('are all known to this Node, which starts with them', async () => {
    const flags = startFlags();
    expect(flags).toEqual(expect.arrayContaining(['--no-allocation-site-pretenuring', '--expose-gc']));
    const started = await runNode(flags, 'process.stdout.write(String(typeof globalThis.gc))');
    expect(started).toEqual({ code: 0, stdout: 'function', stderr: '' });
  });

  it('would be caught if one were not (a flag this V8 does not know)', async () => {
    const refused = await runNode([...startFlags(), '--no-allocation-site-pretenuring-at-all'], '');
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/bad option/);
  });
});
