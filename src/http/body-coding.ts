/**
 * How a request body is encoded, and what the service does about it: a body compressed with
 * `Content-Encoding: gzip`, `deflate` or `br` is decompressed, and the decompressed body is held
 * to the same limit as an uncompressed one (a few kilobytes of gzip cannot become gigabytes in
 * memory: decompression stops at the limit); any other coding is refused with 415. A JSON body
 * is UTF-8 (RFC 8259 8.1): a `charset` parameter naming anything else is refused with 415 rather
 * than read as UTF-8.
 */
import { brotliDecompress, gunzip, inflate } from 'node:zlib';

/** A refusal of the body's encoding, answered 415 (413 when decompressed it exceeds the limit). */
export interface CodingRefusal {
  status: 413 | 415;
  message: string;
}

export type DecodedBody = { ok: true; body: Buffer } | ({ ok: false } & CodingRefusal);

type Decompress = (
  body: Buffer,
  options: { maxOutputLength: number },
  done: (error: Error | null, result: Buffer) => void,
) => void;

const DECOMPRESSORS: Readonly<Record<string, Decompress>> = {
  gzip: gunzip,
  'x-gzip': gunzip,
  deflate: inflate,
  br: brotliDecompress,
};

const SUPPORTED_CODINGS = 'gzip, deflate, br';

/** The codings of a `Content-Encoding` header, in the order they were applied; [] for none. */
function codingsOf(header: string | undefined): string[] {
  if (header === undefined) return [];
  return header
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
}

/** Whether the body must be decoded before it is read (any coding but `identity`). */
export function isEncoded(header: string | undefined): boolean {
  return codingsOf(header).length > 0;
}

/** A refusal when the service cannot decode this `Content-Encoding`; undefined when it can. */
export function unsupportedCoding(header: string | undefined): CodingRefusal | undefined {
  const codings = codingsOf(header);
  // One coding only: stacked codings multiply the work a small body can ask for.
  if (codings.length <= 1 && codings.every((coding) => DECOMPRESSORS[coding] !== undefined)) return undefined;
  return {
    status: 415,
    message: `Unsupported Content-Encoding "${String(header).slice(0, 64)}", expected one of ${SUPPORTED_CODINGS}`,
  };
}

/** The body decoded as `Content-Encoding` says, at most `limitBytes` long once decoded. */
export async function decodeBody(
  body: Buffer,
  header: string | undefined,
  limitBytes: number,
  tooLargeMessage: string,
): Promise<DecodedBody> {
  const refused = unsupportedCoding(header);
  if (refused !== undefined) return { ok: false, ...refused };
  const [coding] = codingsOf(header);
  const decompress = coding === undefined ? undefined : DECOMPRESSORS[coding];
  if (decompress === undefined) return { ok: true, body };
  return new Promise((resolve) => {
    decompress(body, { maxOutputLength: limitBytes }, (error, result) => {
      if (error === null) resolve({ ok: true, body: result });
      else if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') {
        resolve({ ok: false, status: 413, message: tooLargeMessage });
      } else resolve({ ok: false, status: 415, message: `The body is not valid ${coding} data` });
    });
  });
}

/** A refusal when a `Content-Type` names a charset other than UTF-8; undefined when it does not. */
export function unsupportedCharset(contentType: string | null | undefined): CodingRefusal | undefined {
  const charset = /;\s*charset\s*=\s*"?([^";\s]*)"?/i.exec(contentType ?? '')?.[1]?.toLowerCase();
  if (charset === undefined || charset === 'utf-8' || charset === 'utf8') return undefined;
  return { status: 415, message: `Unsupported charset "${charset.slice(0, 64)}", JSON bodies are UTF-8` };
}
