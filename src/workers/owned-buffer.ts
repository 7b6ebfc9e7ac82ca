/**
 * Buffers that own their memory. A small Buffer (`Buffer.from` of a short string, a socket read)
 * is a slice of a slab of Node's shared pool (`Buffer.poolSize` bytes), which lives while any slice of it
 * does. A slice cannot be transferred to a worker (the import's parse workers,
 * src/data/batch-preparer.ts), and one kept for long keeps the whole slab alive
 * (src/profiles/profile.ts, the profile cache's documents).
 */

/** `bytes` when its memory is its own, else a copy in an allocation of its own. */
export function ownedBuffer(bytes: Buffer): Buffer {
  if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength) return bytes;
  const copy = Buffer.allocUnsafeSlow(bytes.byteLength);
  bytes.copy(copy);
  return copy;
}
