/**
 * Wallets from crypto records and the address key of the reverse lookup, without a database
 * (test/discovery.test.ts compares the key with the database's own function).
 */
import { describe, expect, it } from 'vitest';
import { Profile } from '../src/profiles/profile.js';
import { walletAddressKey, walletBySymbol, walletOf, walletsOf } from '../src/profiles/wallets.js';

/** A loaded profile whose `records` object has exactly this JSON text (keys in the order written). */
function profileWithRecords(recordsJson: string): Profile {
  return new Profile({
    id: 1,
    name: 'w@me',
    localPart: 'w',
    namespace: 'me',
    description: '',
    image: '',
    level: 0,
    contentHash: 'x',
    recordsJson,
  });
}

describe('wallets', () => {
  it('gives the CAIP-2 chain and CAIP-10 account of the chains the API additions name', () => {
    const expected: Record<string, string> = {
      btc: 'bip122:000000000019d6689c085ae165831e93',
      eth: 'eip155:1',
      sol: 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp',
      matic: 'eip155:137',
      bnb: 'eip155:56',
      ltc: 'bip122:12a765e31ffd4059bada1e25190f6e98',
      doge: 'bip122:1a91e3dace36e2be3bf030a65679fe82',
    };
    for (const [symbol, chain] of Object.entries(expected)) {
      expect(walletOf(symbol, 'Addr1'), symbol).toEqual({
        symbol,
        address: 'Addr1',
        chain,
        accountId: `${chain}:Addr1`,
      });
      expect(walletOf(symbol.toUpperCase(), 'Addr1').chain, symbol).toBe(chain);
    }
  });

  it('has no chain for an unknown symbol, and no account id for an address CAIP-10 cannot hold', () => {
    expect(walletOf('xyz', 'abc')).toEqual({ symbol: 'xyz', address: 'abc', chain: null, accountId: null });
    expect(walletOf('eth', '').accountId).toBeNull();
    expect(walletOf('eth', 'has space').accountId).toBeNull();
    expect(walletOf('eth', 'x'.repeat(129)).accountId).toBeNull();
    expect(walletOf('eth', 'x'.repeat(128)).accountId).toBe(`eip155:1:${'x'.repeat(128)}`);
  });

  it('lists every entry of every crypto record, records in key order and entries in stored order', () => {
    const profile = profileWithRecords(
      '{"3":{"type":"crypto","value":{"sol":"S1","eth":"0xE1"}},' +
        '"8":{"type":"crypto","value":{"BTC":"B1","2024":"x","eth":"0xE2"}},' +
        '"9":{"type":"social","value":{"eth":"not a wallet"}},"10":{"type":"crypto","value":"not a map"}}',
    );
    expect(walletsOf(profile).map((wallet) => `${wallet.symbol}=${wallet.address}`)).toEqual([
      'sol=S1',
      'eth=0xE1',
      'BTC=B1',
      '2024=x',
      'eth=0xE2',
    ]);
    expect(walletBySymbol(profile, 'ETH')?.address).toBe('0xE1');
    expect(walletBySymbol(profile, 'btc')).toMatchObject({
      symbol: 'BTC',
      chain: 'bip122:000000000019d6689c085ae165831e93',
    });
    expect(walletBySymbol(profile, 'doge')).toBeNull();
    expect(walletsOf(profileWithRecords('{}'))).toEqual([]);
  });

  it('matches 0x addresses without regard to case and others exactly', () => {
    expect(walletAddressKey('0xAbCdEF')).toBe('0xabcdef');
    expect(walletAddressKey('0XABC')).toBe('0xabc');
    expect(walletAddressKey('bc1QAbC')).toBe('bc1QAbC');
    expect(walletAddressKey('0xÄB')).toBe('0xÄb'); // only ASCII letters: the same in every locale
  });
});
