/**
 * The modules that guard webhooks, attacked on their own (docs/security.md, "Webhooks"): the
 * secret store (a secret copied to another endpoint, tampered with, or read with another key or
 * none), the signatures as Standard Webhooks receivers check them (standardwebhooks), the retry
 * schedule and Retry-After, and which URLs an endpoint may have. Deliveries to real receivers are
 * test/webhooks-delivery.test.ts.
 */
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { parseNetwork } from '../src/config/networks.js';
import { createAddressPolicy } from '../src/outbound/address-policy.js';
import type { Resolver } from '../src/outbound/checked-target.js';
import { refusedWebhookUrl, type WebhookTarget } from '../src/webhooks/delivery.js';
import { retryAfterMs, retryDelayMs } from '../src/webhooks/retry-schedule.js';
import { newSecret, SecretStore, SecretUnreadableError } from '../src/webhooks/secrets.js';
import { signedHeaders } from '../src/webhooks/signatures.js';

const KEY = Buffer.alloc(32, 1);

describe('webhook secrets at rest', () => {
  it('are whsec_ and 32 random bytes, shown once, different every time', () => {
    const [a, b] = [newSecret(), newSecret()];
    expect(a.shown).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(a.shown.slice('whsec_'.length), 'base64')).toEqual(a.bytes);
    expect(a.bytes).toHaveLength(32);
    expect(a.shown).not.toBe(b.shown);
  });

  it('open with the key and the endpoint they were sealed for, and with nothing else', () => {
    const store = new SecretStore(KEY);
    const secret = newSecret();
    const sealed = store.seal(secret, 'wh_a');
    expect(sealed).toMatch(/^aes256gcm:/);
    expect(sealed).not.toContain(secret.bytes.toString('base64'));
    expect(store.open(sealed, 'wh_a')).toEqual(secret.bytes);
    // The same secret sealed twice differs (a fresh IV each time).
    expect(store.seal(secret, 'wh_a')).not.toBe(sealed);
    // Copied to another endpoint's row.
    expect(() => store.open(sealed, 'wh_b')).toThrow(SecretUnreadableError);
    // Another key, or none.
    expect(() => new SecretStore(Buffer.alloc(32, 2)).open(sealed, 'wh_a')).toThrow(
      'the webhook secret cannot be read: WEBHOOK_SECRET_KEY is not the key it was encrypted with',
    );
    expect(() => new SecretStore(undefined).open(sealed, 'wh_a')).toThrow(
      'the webhook secret cannot be read: it is encrypted and WEBHOOK_SECRET_KEY is not set',
    );
  });

  it('refuse every tampered byte of the sealed form', () => {
    const store = new SecretStore(KEY);
    const sealed = store.seal(newSecret(), 'wh_a');
    const [form, ...parts] = sealed.split(':');
    parts.forEach((part, index) => {
      const bytes = Buffer.from(part, 'base64');
      for (let at = 0; at < bytes.length; at += 1) {
        const changed = Buffer.from(bytes);
        changed[at] = (changed[at] ?? 0) ^ 0x01;
        const tampered = [form, ...parts.map((other, i) => (i === index ? changed.toString('base64') : other))].join(
          ':',
        );
        expect(() => store.open(tampered, 'wh_a')).toThrow(SecretUnreadableError);
      }
    });
    for (const broken of ['', 'aes256gcm:', 'aes256gcm:a:b', 'rot13:abc', 'plain:a:b']) {
      expect(() => store.open(broken, 'wh_a')).toThrow(SecretUnreadableError);
    }
  });

  it('stored plain without a key, and still read once a key is set', () => {
    const secret = newSecret();
    const stored = new SecretStore(undefined).seal(secret, 'wh_a');
    expect(stored).toBe(`plain:${secret.bytes.toString('base64')}`);
    expect(new SecretStore(KEY).open(stored, 'wh_a')).toEqual(secret.bytes);
  });
});

describe('signatures', () => {
  const body = '{"type":"profile.updated","timestamp":"2026-12-02T00:00:00.000Z","data":{"name":"a@x"}}';
  const headersAt = (secrets: Buffer[], seconds: number) => ({ ...signedHeaders(secrets, 'msg_1', seconds, body) });

  it('verify with standardwebhooks, with either secret while two sign, and with no other', () => {
    const [current, previous, stranger] = [newSecret(), newSecret(), newSecret()];
    const now = Math.floor(Date.now() / 1000);
    const headers = headersAt([current.bytes, previous.bytes], now);
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(new Webhook(current.shown).verify(body, headers)).toMatchObject({ data: { name: 'a@x' } });
    expect(new Webhook(previous.shown).verify(body, headers)).toMatchObject({ data: { name: 'a@x' } });
    expect(() => new Webhook(stranger.shown).verify(body, headers)).toThrow();
  });

  it('fail for another body, another id, or a timestamp five minutes off', () => {
    const secret = newSecret();
    const now = Math.floor(Date.now() / 1000);
    const headers = headersAt([secret.bytes], now);
    const receiver = new Webhook(secret.shown);
    expect(() => receiver.verify(body.replace('a@x', 'b@x'), headers)).toThrow();
    expect(() => receiver.verify(body, { ...headers, 'webhook-id': 'msg_2' })).toThrow();
    expect(() => receiver.verify(body, headersAt([secret.bytes], now - 6 * 60))).toThrow();
  });
});

describe('retries', () => {
  const schedule = [5000, 300_000];

  it('follow the schedule within ±10 %, then stop', () => {
    expect(retryDelayMs(schedule, 1, undefined, () => 0)).toBe(4500);
    expect(retryDelayMs(schedule, 1, undefined, () => 0.999_999)).toBe(5500);
    expect(retryDelayMs(schedule, 2, undefined, () => 0.5)).toBe(300_000);
    expect(retryDelayMs(schedule, 3, undefined)).toBeUndefined();
  });

  it('never come sooner than Retry-After, seconds or a date', () => {
    const now = Date.parse('2026-12-02T12:00:00Z');
    const ceiling = 5 * 86_400_000;
    expect(retryAfterMs('120', now, ceiling)).toBe(120_000);
    expect(retryAfterMs(' 7 ', now, ceiling)).toBe(7000);
    expect(retryAfterMs('Wed, 02 Dec 2026 12:10:00 GMT', now, ceiling)).toBe(600_000);
    expect(retryAfterMs('Wed, 02 Dec 2026 11:00:00 GMT', now, ceiling)).toBe(0);
    expect(retryDelayMs(schedule, 1, 120_000, () => 0.5)).toBe(120_000);
    expect(retryDelayMs(schedule, 1, 10, () => 0.5)).toBe(5000);
  });

  it('ignore a Retry-After that says nothing, and cap one that asks for years at WEBHOOK_DISABLE_AFTER', () => {
    const now = Date.now();
    for (const nonsense of [undefined, '', 'soon', '-5', '1.5', 'NaN']) {
      expect(retryAfterMs(nonsense, now, 1000)).toBeUndefined();
    }
    expect(retryAfterMs('999999999999999999999', now, 432_000_000)).toBe(432_000_000);
    expect(retryAfterMs('Fri, 01 Jan 2100 00:00:00 GMT', now, 432_000_000)).toBe(432_000_000);
  });
});

describe('which URLs an endpoint may have', () => {
  /** A resolver that answers from a table, like a hostile name server would. */
  const resolving =
    (table: Record<string, string[]>): Resolver =>
    async (hostname) => {
      const addresses = table[hostname];
      if (addresses === undefined)
        throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
      return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    };
  const names = {
    'hooks.example.com': ['93.184.215.14'],
    'two-faced.example.com': ['93.184.215.14', '10.0.0.7'],
    'metadata.example.com': ['169.254.169.254'],
    'mapped.example.com': ['::ffff:127.0.0.1'],
    'intranet.example.com': ['10.1.2.3'],
  };
  const target = (allowed: string[] = []): WebhookTarget => ({
    policy: createAddressPolicy(allowed.map((text) => parseNetwork(text)).filter((network) => network !== null)),
    resolve: resolving(names),
  });

  it('allows https to a public address', async () => {
    expect(await refusedWebhookUrl('https://hooks.example.com/in', target())).toBeUndefined();
  });

  it.each([
    ['http to a public address', 'http://hooks.example.com/in', 'http is allowed only'],
    ['another scheme', 'ftp://hooks.example.com/in', 'The url is refused'],
    ['credentials', 'https://user:pw@hooks.example.com/in', 'The url is refused'],
    ['not a URL', 'hooks.example.com/in', 'not a URL'],
    ['loopback', 'https://127.0.0.1/in', 'refused'],
    ['loopback spelled as a number', 'https://2130706433/in', 'refused'],
    ['loopback in octal and short', 'https://0177.1/in', 'refused'],
    ['IPv4-mapped loopback', 'https://[::ffff:7f00:1]/in', 'refused'],
    ['cloud metadata by name', 'https://metadata.example.com/latest', 'refused'],
    ['a name with one private address among public ones', 'https://two-faced.example.com/in', 'refused'],
    ['a name that resolves to mapped loopback', 'https://mapped.example.com/in', 'refused'],
    ['a name that does not resolve', 'https://nowhere.example.com/in', 'The url is refused'],
  ])('refuses %s, saying why', async (_, url, why) => {
    const refusal = await refusedWebhookUrl(url, target());
    expect(refusal).toMatch(/^The url is refused: /);
    expect(refusal).toContain(why);
  });

  it('lets WEBHOOK_PRIVATE_ORIGINS through, over http too, and nothing beside it', async () => {
    const intranet = target(['10.0.0.0/8']);
    expect(await refusedWebhookUrl('http://intranet.example.com/in', intranet)).toBeUndefined();
    expect(await refusedWebhookUrl('https://10.9.9.9/in', intranet)).toBeUndefined();
    expect(await refusedWebhookUrl('https://192.168.1.1/in', intranet)).toMatch(/refused/);
    // http to a public address stays refused although private ones are listed.
    expect(await refusedWebhookUrl('http://hooks.example.com/in', intranet)).toMatch(/http is allowed only/);
  });
});
