/**
 * Cuts a byte stream into batches of whole lines without decoding it: the importer hands each
 * batch to a parser (possibly another thread) as one buffer, and only counts line ends here.
 * Lines end with `\n`; the last line may lack it. A batch is cut after `linesPerBatch` lines or
 * once it holds `maxBytes`, whichever comes first, always at a line end.
 */

const NEWLINE = 0x0a;

export interface LineBatch {
  /** Whole lines, each ending in `\n` except possibly the very last line of the input. */
  bytes: Buffer;
  /** Number of the batch's first line (1-based). */
  firstLine: number;
  /** Lines in the batch. */
  lines: number;
}

export async function* lineBatches(
  input: AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>,
  linesPerBatch: number,
  maxBytes = 16 * 1024 * 1024,
): AsyncGenerator<LineBatch> {
  /** Pieces of the batch being filled; the last one may end in a partial line. */
  let pieces: Buffer[] = [];
  let bytes = 0;
  let lines = 0;
  let nextLine = 1;
  const take = (piece: Buffer) => {
    pieces.push(piece);
    bytes += piece.length;
  };
  const cut = (): LineBatch => {
    // Always a copy: the stream may reuse the memory of its chunks, and the batch lives on.
    const batch = { bytes: Buffer.concat(pieces, bytes), firstLine: nextLine, lines };
    nextLine += lines;
    pieces = [];
    bytes = 0;
    lines = 0;
    return batch;
  };
  for await (const chunk of input) {
    const data =
      typeof chunk === 'string'
        ? Buffer.from(chunk, 'utf8')
        : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let start = 0;
    let searchFrom = 0;
    for (;;) {
      const newline = data.indexOf(NEWLINE, searchFrom);
      if (newline < 0) break;
      lines += 1;
      searchFrom = newline + 1;
      if (lines >= linesPerBatch || bytes + (searchFrom - start) >= maxBytes) {
        take(data.subarray(start, searchFrom));
        start = searchFrom;
        yield cut();
      }
    }
    // Copied: the stream may reuse its chunk's memory once we ask for the next one.
    if (start < data.length) take(Buffer.from(data.subarray(start)));
  }
  if (bytes > 0) {
    const last = pieces.at(-1);
    // A final line without its `\n` is still a line.
    if (last !== undefined && last[last.length - 1] !== NEWLINE) lines += 1;
    yield cut();
  }
}

/** Whole lines of text as batches (tests, demo data): each line gets its `\n`. */
export async function* textLineBatches(
  lines: AsyncIterable<string | Uint8Array> | Iterable<string | Uint8Array>,
  linesPerBatch: number,
): AsyncGenerator<LineBatch> {
  const newline = Buffer.from('\n');
  let pieces: Buffer[] = [];
  let count = 0;
  let nextLine = 1;
  for await (const line of lines) {
    pieces.push(typeof line === 'string' ? Buffer.from(line, 'utf8') : Buffer.from(line), newline);
    count += 1;
    if (count >= linesPerBatch) {
      yield { bytes: Buffer.concat(pieces), firstLine: nextLine, lines: count };
      nextLine += count;
      pieces = [];
      count = 0;
    }
  }
  if (count > 0) yield { bytes: Buffer.concat(pieces), firstLine: nextLine, lines: count };
}
