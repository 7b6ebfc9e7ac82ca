/**
 * Which address a request is counted against. By default only the socket's peer address counts,
 * whatever headers the client sends; X-Forwarded-For is read only through TRUST_PROXY_HOPS.
 */
import { createServer, type IncomingMessage, type OutgoingHttpHeaders, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientIp, normaliseIp, UNKNOWN_CLIENT } from '../src/limits/client-ip.js';
import { addressKey, rateLimitKey } from '../src/limits/client-key.js';

/** A request as node hands it over: peer address on the socket, headers lower-cased. */
function fakeRequest(remoteAddress: string | undefined, forwardedFor?: string | string[]): IncomingMessage {
  const headers = forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor };
  return { socket: { remoteAddress }, headers } as unknown as IncomingMessage;
}

describe('clientIp without trusted proxies (TRUST_PROXY_HOPS=0)', () => {
  it('is the socket peer address', () => {
    expect(clientIp(fakeRequest('203.0.113.10'), 0)).toBe('203.0.113.10');
  });

  it('ignores a forged X-Forwarded-For', () => {
    expect(clientIp(fakeRequest('203.0.113.10', '198.51.100.1'), 0)).toBe('203.0.113.10');
    expect(clientIp(fakeRequest('203.0.113.10', ['198.51.100.1', '198.51.100.2, 198.51.100.3']), 0)).toBe(
      '203.0.113.10',
    );
  });

  it('reports IPv4 clients of a dual-stack socket as plain IPv4', () => {
    expect(clientIp(fakeRequest('::ffff:203.0.113.10'), 0)).toBe('203.0.113.10');
  });

  it('gives IPv6 peers one spelling', () => {
    expect(clientIp(fakeRequest('2001:DB8:0:0::1'), 0)).toBe('2001:db8::1');
  });

  it('has a stable placeholder when the socket lost its peer address', () => {
    expect(clientIp(fakeRequest(undefined), 0)).toBe(UNKNOWN_CLIENT);
  });
});

describe('clientIp behind trusted proxies', () => {
  it('takes the Nth entry from the right', () => {
    const chain = '198.51.100.1, 198.51.100.2, 192.0.2.3';
    expect(clientIp(fakeRequest('10.0.0.1', chain), 1)).toBe('192.0.2.3');
    expect(clientIp(fakeRequest('10.0.0.1', chain), 2)).toBe('198.51.100.2');
    expect(clientIp(fakeRequest('10.0.0.1', chain), 3)).toBe('198.51.100.1');
  });

  it('cannot be steered by entries the client prepends', () => {
    // The client sent "X-Forwarded-For: 1.1.1.1"; the one trusted proxy appended the real peer.
    expect(clientIp(fakeRequest('10.0.0.1', '1.1.1.1, 203.0.113.10'), 1)).toBe('203.0.113.10');
  });

  it('reads several header lines as one list, in order', () => {
    expect(clientIp(fakeRequest('10.0.0.1', ['198.51.100.1, 198.51.100.2', '192.0.2.3']), 2)).toBe('198.51.100.2');
  });

  it('trims entries and skips empty ones', () => {
    expect(clientIp(fakeRequest('10.0.0.1', ' 198.51.100.1 ,, 192.0.2.3 '), 2)).toBe('198.51.100.1');
  });

  it('uses the leftmost entry when there are fewer entries than trusted hops', () => {
    expect(clientIp(fakeRequest('10.0.0.1', '198.51.100.1, 192.0.2.3'), 5)).toBe('198.51.100.1');
  });

  it('falls back to the peer address without the header', () => {
    expect(clientIp(fakeRequest('10.0.0.1'), 1)).toBe('10.0.0.1');
    expect(clientIp(fakeRequest('10.0.0.1', ''), 1)).toBe('10.0.0.1');
  });

  it('falls back to the peer address when the chosen entry is not an IP address', () => {
    for (const junk of ['unknown', 'evil.example', "1.2.3.4' OR 1=1", '999.1.1.1', '<script>', '_hidden']) {
      expect(clientIp(fakeRequest('10.0.0.1', `198.51.100.1, ${junk}`), 1)).toBe('10.0.0.1');
    }
  });

  it('understands ports and brackets that proxies write', () => {
    expect(clientIp(fakeRequest('10.0.0.1', '203.0.113.10:54321'), 1)).toBe('203.0.113.10');
    expect(clientIp(fakeRequest('10.0.0.1', '[2001:db8::7]:443'), 1)).toBe('2001:db8::7');
    expect(clientIp(fakeRequest('10.0.0.1', '[2001:DB8::7]'), 1)).toBe('2001:db8::7');
    expect(clientIp(fakeRequest('10.0.0.1', '::ffff:203.0.113.10'), 1)).toBe('203.0.113.10');
  });
});

describe('normaliseIp', () => {
  it('accepts addresses and rejects everything else', () => {
    expect(normaliseIp('192.0.2.1')).toBe('192.0.2.1');
    expect(normaliseIp('fe80::1%eth0')).toBe('fe80::1');
    expect(normaliseIp('::FFFF:c000:0201')).toBe('192.0.2.1');
    for (const bad of ['', ' ', '192.0.2', '192.0.2.1.5', '2001:db8:::1', '[::1', 'localhost', '192.0.2.1:99999']) {
      expect(normaliseIp(bad)).toBeUndefined();
    }
  });
});

describe('rate-limit key', () => {
  it('is the IPv4 address itself', () => {
    expect(addressKey('203.0.113.10')).toBe('203.0.113.10');
  });

  it('is the /64 network for IPv6, so one client cannot rotate through its own addresses', () => {
    const key = addressKey('2001:db8:aa:bb:1:2:3:4');
    expect(key).toBe('2001:db8:aa:bb::/64');
    expect(addressKey('2001:db8:aa:bb:ffff:ffff:ffff:ffff')).toBe(key);
    expect(addressKey('2001:db8:aa:bc::1')).not.toBe(key);
    expect(addressKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressKey('::1')).toBe('0:0:0:0::/64');
  });

  it('combines client address and key', () => {
    expect(rateLimitKey(fakeRequest('2001:db8:aa:bb::9'), 0)).toBe('2001:db8:aa:bb::/64');
    expect(rateLimitKey(fakeRequest('10.0.0.1', '2001:db8:aa:bb::9'), 1)).toBe('2001:db8:aa:bb::/64');
  });
});

describe('clientIp on a real socket with forged headers', () => {
  let url: URL;
  let hops = 0;
  const server = createServer((req, res) => {
    res.end(clientIp(req, hops));
  });
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  function ask(headers: OutgoingHttpHeaders): Promise<string> {
    return new Promise((resolve, reject) => {
      const req = request(url, { headers, agent: false }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve(body));
      });
      req.on('error', reject);
      req.end();
    });
  }

  it('counts the peer, whatever X-Forwarded-For says, with 0 hops', async () => {
    hops = 0;
    expect(await ask({})).toBe('127.0.0.1');
    expect(await ask({ 'X-Forwarded-For': '198.51.100.1' })).toBe('127.0.0.1');
    expect(await ask({ 'X-Forwarded-For': ['198.51.100.1', '198.51.100.2'] })).toBe('127.0.0.1');
    expect(await ask({ 'X-Real-IP': '198.51.100.1', Forwarded: 'for=198.51.100.1' })).toBe('127.0.0.1');
  });

  it('reads the header lines node receives, with 1 hop', async () => {
    hops = 1;
    expect(await ask({ 'X-Forwarded-For': ['198.51.100.1', '198.51.100.2'] })).toBe('198.51.100.2');
    expect(await ask({ 'X-Forwarded-For': 'not-an-ip' })).toBe('127.0.0.1');
  });
});
