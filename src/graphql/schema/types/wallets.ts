/**
 * Wallets of a profile: `Profile.wallets` and `Profile.wallet(symbol:)`, typed views of the
 * entries of its `crypto` records with CAIP chain and account ids (src/profiles/wallets.ts).
 * Added to Profile from here, so the profile module stays as it is: ../schema.ts calls this
 * after the queries of profiles, which puts Wallet after OwnerCheckResult in `schema.graphql`.
 */
import type { Profile } from '../../../profiles/profile.js';
import { type Wallet, walletBySymbol, walletsOf } from '../../../profiles/wallets.js';
import type { Builder, ObjectOf } from '../builder.js';

const CLAIM_NOTE = 'A claim the profile makes, not verified ownership.';

/** The Wallet type and the fields `Profile.wallets` and `Profile.wallet(symbol:)`. */
export function registerWalletFields(builder: Builder, ProfileRef: ObjectOf<Profile>): void {
  const WalletRef = registerWallet(builder);
  builder.objectFields(ProfileRef, (t) => ({
    wallets: t.field({
      type: [WalletRef],
      description: `One wallet per entry of the \`crypto\` records: records in key order, entries in stored order. ${CLAIM_NOTE}`,
      resolve: (profile) => walletsOf(profile),
    }),
    wallet: t.field({
      type: WalletRef,
      nullable: true,
      description: 'The first wallet whose symbol is `symbol` (without regard to case), or null.',
      args: { symbol: t.arg.string({ required: true, description: 'A symbol, e.g. `eth`.' }) },
      resolve: (profile, args) => walletBySymbol(profile, args.symbol),
    }),
  }));
}

function registerWallet(builder: Builder): ObjectOf<Wallet> {
  return builder.objectRef<Wallet>('Wallet').implement({
    description: `A wallet address from a \`crypto\` record of a profile. ${CLAIM_NOTE}`,
    fields: (t) => ({
      symbol: t.exposeString('symbol', { description: 'The key of the entry as stored, e.g. `eth` or `btc`.' }),
      address: t.exposeString('address', { description: 'The address as stored.' }),
      chain: t.exposeString('chain', {
        nullable: true,
        description:
          'The CAIP-2 chain id when the symbol names a known chain (`btc` → `bip122:000000000019d6689c085ae165831e93`, ' +
          '`eth` → `eip155:1`, `sol` → `solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp`, also `ltc`, `doge`, `bnb`, `matic`, ' +
          '`pol`, `etc`, `avax`, `ftm`, `celo`, `xdai`), matched without regard to case; otherwise null.',
      }),
      accountId: t.exposeString('accountId', {
        nullable: true,
        description:
          'The CAIP-10 account id `<chain>:<address>`; null when the chain is unknown or the address is not a CAIP-10 ' +
          'account address (1 to 128 letters, digits, `-`, `.` or `%`).',
      }),
    }),
  });
}
