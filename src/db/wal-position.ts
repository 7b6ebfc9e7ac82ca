/**
 * Positions in PostgreSQL's write-ahead log (LSNs, written `16/B374D848`): where the primary has
 * got to, and how far a streaming replica has replayed. A replica that has replayed position P
 * shows every transaction whose commit record ends at or before P.
 */

/** An LSN as a number that compares and subtracts (bytes of WAL). */
export type WalPosition = bigint;

export const WAL_START: WalPosition = 0n;

/** `16/B374D848` → 0x16B374D848; undefined for anything else (PostgreSQL answers null on a primary). */
export function parseWalPosition(text: string | null | undefined): WalPosition | undefined {
  const match = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(text ?? '');
  if (match === null) return undefined;
  return (BigInt(`0x${match[1]}`) << 32n) | BigInt(`0x${match[2]}`);
}

export function formatWalPosition(position: WalPosition): string {
  return `${(position >> 32n).toString(16).toUpperCase()}/${(position & 0xffffffffn).toString(16).toUpperCase()}`;
}

export const laterOf = (a: WalPosition, b: WalPosition): WalPosition => (a > b ? a : b);
