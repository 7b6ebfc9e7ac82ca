/**
 * Wallets: the entries of a profile's `crypto` records as typed addresses, with the chain's
 * CAIP-2 id and the account's CAIP-10 id where the symbol names a chain we know.
 *
 * These are claims the profile makes, not verified ownership: nothing here checks an address.
 */
import type { Profile } from './profile.js';
import { isStringMap } from './record-types.js';

export interface Wallet {
  /** The entry's key as stored, e.g. `eth`. */
  symbol: string;
  /** The address as stored. */
  address: string;
  /** CAIP-2 chain id, or null when the symbol is not a chain we know. */
  chain: string | null;
  /** CAIP-10 account id `<chain>:<address>`, or null (unknown chain, or not a CAIP-10 address). */
  accountId: string | null;
}

/**
 * CAIP-2 ids of the chains whose native currency goes by these symbols (lower case). Bitcoin-like
 * chains are named by their genesis block hash (namespace bip122), EVM chains by their EIP-155
 * chain id, Solana by its genesis hash (namespace solana).
 */
const KNOWN_CHAINS: ReadonlyMap<string, string> = new Map([
  ['btc', 'bip122:000000000019d6689c085ae165831e93'],
  ['ltc', 'bip122:12a765e31ffd4059bada1e25190f6e98'],
  ['doge', 'bip122:1a91e3dace36e2be3bf030a65679fe82'],
  ['eth', 'eip155:1'],
  ['etc', 'eip155:61'],
  ['bnb', 'eip155:56'],
  ['matic', 'eip155:137'],
  // Polygon's currency was renamed from MATIC to POL in 2024; the chain is the same.
  ['pol', 'eip155:137'],
  ['avax', 'eip155:43114'],
  ['ftm', 'eip155:250'],
  ['celo', 'eip155:42220'],
  ['xdai', 'eip155:100'],
  ['sol', 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp'],
]);

/** CAIP-10's account address: 1 to 128 of these characters. */
const CAIP10_ADDRESS = /^[-.%a-zA-Z0-9]{1,128}$/;

function chainOf(symbol: string): string | null {
  return KNOWN_CHAINS.get(symbol.toLowerCase()) ?? null;
}

export function walletOf(symbol: string, address: string): Wallet {
  const chain = chainOf(symbol);
  const accountId = chain !== null && CAIP10_ADDRESS.test(address) ? `${chain}:${address}` : null;
  return { symbol, address, chain, accountId };
}

/** Every entry of the profile's `crypto` records: records in key order, entries in stored order. */
export function walletsOf(profile: Profile): Wallet[] {
  return profile.records.flatMap((record) =>
    record.type === 'crypto' && isStringMap(record.raw)
      ? Object.entries(record.raw).map(([symbol, address]) => walletOf(symbol, address))
      : [],
  );
}

/** The first wallet whose symbol equals `symbol` without regard to case, or null. */
export function walletBySymbol(profile: Profile, symbol: string): Wallet | null {
  const wanted = symbol.toLowerCase();
  return walletsOf(profile).find((wallet) => wallet.symbol.toLowerCase() === wanted) ?? null;
}

/**
 * How the reverse lookup matches an address: `0x` (EVM) addresses without regard to case (their
 * letters are hex digits, upper case only as an EIP-55 checksum), anything else exactly. The
 * same rule as the database function `wallet_address_key` that indexes the stored addresses.
 */
export function walletAddressKey(address: string): string {
  return /^0[xX]/.test(address) ? address.replace(/[A-Z]/g, (letter) => letter.toLowerCase()) : address;
}
