/**
 * Attacks on the avatar fetch guard (src/outbound/address-policy.ts, src/avatars/safe-fetch.ts):
 * refused ranges in every spelling, redirects into them, names resolving into them (also on a
 * second resolution: the connection goes to the checked address), and the bounds (deadline,
 * byte cap with the connection closed at the cap). The origin on 127.0.0.1 is allowed as a
 * private origin; the one on 127.0.0.2 is not, and must never see a request.
 */
import { randomBytes } from 'node:crypto';
import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutboundError, type Resolver, type SafeFetchOptions, safeFetch } from '../src/avatars/safe-fetch.js';
import { parseNetwork } from '../src/config/networks.js';
import { canonicalAddress, createAddressPolicy } from '../src/outbound/address-policy.js';
import { type ImageOrigin, redirect, serve, startImageOrigin } from './support/image-origin.js';

const LOOPBACK_ONE = parseNetwork('127.0.0.1/32');
const policy = createAddressPolicy(LOOPBACK_ONE === null ? [] : [LOOPBACK_ONE]);
const strict = createAddressPolicy();

async function failureOf(url: string, options: Partial<SafeFetchOptions> = {}): Promise<string> {
  try {
    await safeFetch(url, { policy, timeoutMs: 2000, maxBytes: 1024 * 1024, ...options });
  } catch (error) {
    if (error instanceof OutboundError) return error.failure;
    throw error;
  }
  return 'fetched';
}

describe('the address policy', () => {
  it.each([
    '127.0.0.1',
    '127.255.255.254',
    '0.0.0.0',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '100.127.255.255',
    '224.0.0.1',
    '239.255.255.250',
    '255.255.255.255',
    '192.0.2.10',
    '198.51.100.7',
    '203.0.113.9',
    '198.18.0.1',
    '::',
    '::1',
    'fe80::1',
    'fc00::1',
    'fd12:3456::1',
    'ff02::1',
    '2001:db8::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    '::ffff:a9fe:a9fe',
    '64:ff9b::a9fe:a9fe',
    '64:ff9b::7f00:1',
    '2002:7f00:1::',
    '2002:a9fe:a9fe::1',
    '0x7f000001',
    '2130706433',
    '0177.0.0.1',
    '017700000001',
    '127.1',
    '0x7f.1',
    '0X7F.0.0.1',
    '[::ffff:127.0.0.1]',
    '[0:0:0:0:0:ffff:7f00:1]',
    '0xa9fea9fe',
    '2852039166',
    '0251.0376.0251.0376',
  ])('refuses %s', (address) => {
    expect(strict.allows(address)).toBe(false);
  });

  it.each(['8.8.8.8', '1.1.1.1', '93.184.216.34', '100.128.0.1', '172.32.0.1', '2606:4700::1111', '2a00:1450::1'])(
    'allows the public address %s',
    (address) => {
      expect(strict.allows(address)).toBe(true);
    },
  );

  it('refuses what is not an address at all', () => {
    expect(strict.allows('localhost')).toBe(false);
    expect(strict.allows('')).toBe(false);
    expect(canonicalAddress('img.example.org')).toBeNull();
    expect(canonicalAddress('1.2.3.4.5')).toBeNull();
  });

  it('lets listed networks through, and only those', () => {
    expect(policy.allows('127.0.0.1')).toBe(true);
    expect(policy.allows('0x7f000001')).toBe(true);
    expect(policy.allows('127.0.0.2')).toBe(false);
    const intranet = createAddressPolicy(
      [parseNetwork('10.0.0.0/8'), parseNetwork('fd00::/8')].flatMap((n) => (n ? [n] : [])),
    );
    expect(intranet.allows('10.200.0.1')).toBe(true);
    expect(intranet.allows('fd00::5')).toBe(true);
    expect(intranet.allows('11.0.0.1')).toBe(true);
    expect(intranet.allows('192.168.0.1')).toBe(false);
    expect(intranet.allows('169.254.169.254')).toBe(false);
  });

  it('reads networks, and refuses what is not one', () => {
    expect(parseNetwork('10.0.0.0/8')).toEqual({ address: '10.0.0.0', prefix: 8, family: 'ipv4' });
    expect(parseNetwork('fd00::/8')).toEqual({ address: 'fd00::', prefix: 8, family: 'ipv6' });
    expect(parseNetwork('127.0.0.1')).toEqual({ address: '127.0.0.1', prefix: 32, family: 'ipv4' });
    for (const bad of ['10.0.0.0/33', 'fd00::/129', 'example.org/8', '10.0.0.0/8/8', '10.0.0.0/x', '']) {
      expect(parseNetwork(bad), bad).toBeNull();
    }
  });
});

describe('fetching an original', () => {
  let allowed: ImageOrigin;
  let forbidden: ImageOrigin;
  const image = Buffer.from('the image bytes');

  beforeAll(async () => {
    allowed = await startImageOrigin('127.0.0.1');
    forbidden = await startImageOrigin('127.0.0.2');
    allowed.route('/a.png', serve(image, 'image/png'));
    forbidden.route('/secret', serve('internal', 'text/plain'));
  });
  afterAll(async () => {
    expect(forbidden.requests).toEqual([]);
    await allowed?.close();
    await forbidden?.close();
  });

  it('fetches from an allowed origin', async () => {
    const fetched = await safeFetch(`${allowed.url}/a.png`, { policy, timeoutMs: 2000, maxBytes: 1024 });
    expect(fetched.body.equals(image)).toBe(true);
    expect(fetched.redirects).toBe(0);
  });

  it('returns the exact bytes of a body that arrives in many pieces, with or without Content-Length', async () => {
    const large = randomBytes(600 * 1024);
    const inPieces =
      (declare: boolean) => (_req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => {
        res.writeHead(200, declare ? { 'Content-Length': large.length } : {});
        for (let offset = 0; offset < large.length; offset += 7000) res.write(large.subarray(offset, offset + 7000));
        res.end();
      };
    allowed.route('/pieces-declared', inPieces(true));
    allowed.route('/pieces-chunked', inPieces(false));
    for (const path of ['/pieces-declared', '/pieces-chunked']) {
      const fetched = await safeFetch(`${allowed.url}${path}`, { policy, timeoutMs: 5000, maxBytes: 1024 * 1024 });
      expect(fetched.body.equals(large), path).toBe(true);
    }
  });

  it('refuses every spelling of the forbidden origin without connecting', async () => {
    const port = forbidden.port;
    for (const host of [
      '127.0.0.2',
      '0x7f000002',
      '2130706434',
      '0177.0.0.2',
      '127.2',
      '0x7f.2',
      '[::ffff:127.0.0.2]',
      '[::ffff:7f00:2]',
    ]) {
      expect(await failureOf(`http://${host}:${port}/secret`), host).toBe('refused-address');
    }
    expect(forbidden.requests).toEqual([]);
  });

  it('refuses other schemes and credentials', async () => {
    for (const url of [
      'file:///etc/passwd',
      'ftp://127.0.0.1/a.png',
      'gopher://127.0.0.1:70/',
      'data:image/png;base64,AAAA',
      `http://user:pw@127.0.0.1:${allowed.port}/a.png`,
    ]) {
      expect(await failureOf(url), url).toBe('refused-url');
    }
  });

  it('follows up to three redirects to an allowed image, not four', async () => {
    allowed.route('/r1', redirect('/r2'));
    allowed.route('/r2', redirect(`${allowed.url}/r3`, 301));
    allowed.route('/r3', redirect('/a.png', 307));
    allowed.route('/r0', redirect('/r1'));
    const fetched = await safeFetch(`${allowed.url}/r1`, { policy, timeoutMs: 2000, maxBytes: 1024 });
    expect(fetched.body.equals(image)).toBe(true);
    expect(fetched.redirects).toBe(3);
    expect(await failureOf(`${allowed.url}/r0`)).toBe('redirect-limit');
  });

  it('does not follow redirects into refused addresses', async () => {
    allowed.route('/to-forbidden', redirect(`${forbidden.url}/secret`));
    allowed.route('/to-hex', redirect(`http://0x7f000002:${forbidden.port}/secret`));
    allowed.route('/to-metadata', redirect('http://169.254.169.254/latest/meta-data/'));
    allowed.route('/to-file', redirect('file:///etc/passwd'));
    allowed.route('/to-credentials', redirect(`http://user:pw@127.0.0.1:${allowed.port}/a.png`));
    for (const path of ['/to-forbidden', '/to-hex', '/to-metadata']) {
      expect(await failureOf(`${allowed.url}${path}`), path).toBe('refused-address');
    }
    for (const path of ['/to-file', '/to-credentials']) {
      expect(await failureOf(`${allowed.url}${path}`), path).toBe('refused-url');
    }
    expect(forbidden.requests).toEqual([]);
  });

  it('checks every address a name resolves to', async () => {
    const mixed: Resolver = async () => [
      { address: '127.0.0.1', family: 4 },
      { address: '127.0.0.2', family: 4 },
    ];
    expect(await failureOf(`http://images.test:${allowed.port}/a.png`, { resolve: mixed })).toBe('refused-address');
    const metadata: Resolver = async () => [{ address: '169.254.169.254', family: 4 }];
    expect(await failureOf('http://images.test/a.png', { resolve: metadata })).toBe('refused-address');
    expect(await failureOf(`http://localhost:${allowed.port}/a.png`, { policy: strict })).toBe('refused-address');
  });

  it('connects to the address it checked: a rebinding name server gets no second question', async () => {
    const asked: string[] = [];
    // First answer public-looking (allowed here), every later one the forbidden origin.
    const rebinding: Resolver = async (hostname) => {
      asked.push(hostname);
      return [{ address: asked.length === 1 ? '127.0.0.1' : '127.0.0.2', family: 4 }];
    };
    let host: string | undefined;
    allowed.route('/named.png', (req, res) => {
      host = req.headers.host;
      serve(image)(req, res);
    });
    const fetched = await safeFetch(`http://images.test:${allowed.port}/named.png`, {
      policy,
      timeoutMs: 2000,
      maxBytes: 1024,
      resolve: rebinding,
    });
    expect(fetched.body.equals(image)).toBe(true);
    expect(asked).toEqual(['images.test']);
    expect(host).toBe(`images.test:${allowed.port}`);
    expect(forbidden.requests).toEqual([]);
  });

  it('abandons a body at the byte cap, closing the connection long before the end', async () => {
    const total = 30 * 1024 * 1024;
    const sent: Record<string, { bytes: number; closed: Promise<void> }> = {};
    const streaming =
      (declare: boolean) => (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => {
        const socket: Socket = req.socket;
        const record = { bytes: 0, closed: new Promise<void>((resolve) => socket.once('close', () => resolve())) };
        sent[req.url ?? ''] = record;
        res.writeHead(
          200,
          declare ? { 'Content-Type': 'image/jpeg', 'Content-Length': total } : { 'Content-Type': 'image/jpeg' },
        );
        const chunk = Buffer.alloc(64 * 1024, 1);
        const write = () => {
          while (record.bytes < total && !socket.destroyed) {
            record.bytes += chunk.length;
            if (!res.write(chunk)) {
              res.once('drain', write);
              return;
            }
          }
          if (!socket.destroyed) res.end();
        };
        write();
      };
    allowed.route('/huge-chunked', streaming(false));
    allowed.route('/huge-declared', streaming(true));
    for (const path of ['/huge-chunked', '/huge-declared']) {
      expect(await failureOf(`${allowed.url}${path}`, { maxBytes: 1024 * 1024 }), path).toBe('too-large');
      const record = sent[path];
      await record?.closed;
      // What the origin managed to write before the connection closed: socket buffers beyond the cap, not 30 MB.
      expect(record?.bytes ?? total, path).toBeLessThan(total / 3);
    }
  });

  it('gives up on an origin that never finishes, at the deadline', async () => {
    allowed.route('/never', (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'image/jpeg', 'Content-Length': 1000 });
      res.write(Buffer.alloc(10));
    });
    allowed.route('/silent', () => {});
    for (const path of ['/never', '/silent']) {
      const started = Date.now();
      expect(await failureOf(`${allowed.url}${path}`, { timeoutMs: 300 }), path).toBe('timeout');
      expect(Date.now() - started, path).toBeLessThan(5000);
    }
  });

  it('treats other statuses, and a redirect to no URL, as HTTP errors', async () => {
    allowed.route('/gone', (_req, res) => res.writeHead(410).end('gone'));
    allowed.route('/nowhere', (_req, res) => res.writeHead(302, { Location: 'http://[::1' }).end());
    allowed.route('/no-location', (_req, res) => res.writeHead(302).end());
    for (const path of ['/gone', '/not-routed', '/nowhere', '/no-location']) {
      expect(await failureOf(`${allowed.url}${path}`), path).toBe('http-error');
    }
  });

  it('treats names that do not resolve and broken connections as network errors', async () => {
    const nowhere: Resolver = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND images.test'), { code: 'ENOTFOUND' });
    };
    expect(await failureOf('http://images.test/a.png', { resolve: nowhere })).toBe('network-error');
    expect(await failureOf('http://images.test/a.png', { resolve: async () => [] })).toBe('network-error');
    // A port nothing listens on any more: the connection is refused.
    const closed = await startImageOrigin('127.0.0.1');
    await closed.close();
    expect(await failureOf(`${closed.url}/a.png`)).toBe('network-error');
    allowed.route('/hang-up', (req) => req.socket.destroy());
    allowed.route('/cut-off', (req, res) => {
      res.writeHead(200, { 'Content-Type': 'image/png', 'Content-Length': 1000 });
      res.write(Buffer.alloc(10), () => req.socket.destroy());
    });
    for (const path of ['/hang-up', '/cut-off']) {
      expect(await failureOf(`${allowed.url}${path}`), path).toBe('network-error');
    }
  });
});
