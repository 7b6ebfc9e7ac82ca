/**
 * Splits a byte stream into lines without decoding it. readline would decode for us, but it
 * replaces invalid UTF-8 with U+FFFD silently; the importer has to see the raw bytes to reject
 * a mis-encoded line instead of storing mangled text.
 */

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

/**
 * The lines of `input`, without their `\n` or `\r\n`. A yielded buffer may share memory with the
 * stream's chunk: use it before asking for the next line.
 */
export async function* readLines(input: AsyncIterable<Uint8Array | string>): AsyncGenerator<Buffer> {
  // The start of a line that continues in a later chunk; a list so long lines are copied once.
  let pending: Buffer[] = [];
  for await (const chunk of input) {
    const bytes =
      typeof chunk === 'string'
        ? Buffer.from(chunk, 'utf8')
        : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let start = 0;
    for (let newline = bytes.indexOf(NEWLINE, start); newline >= 0; newline = bytes.indexOf(NEWLINE, start)) {
      const piece = bytes.subarray(start, newline);
      yield withoutCarriageReturn(pending.length === 0 ? piece : Buffer.concat([...pending, piece]));
      pending = [];
      start = newline + 1;
    }
    if (start < bytes.length) pending.push(bytes.subarray(start));
  }
  if (pending.length > 0) yield withoutCarriageReturn(Buffer.concat(pending));
}

function withoutCarriageReturn(line: Buffer): Buffer {
  return line.length > 0 && line[line.length - 1] === CARRIAGE_RETURN ? line.subarray(0, -1) : line;
}
