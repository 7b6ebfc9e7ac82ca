/**
 * Turning an original's bytes into the variant a client asked for, with sharp (libvips): the
 * type decided from the bytes, the pixel count checked from the header before anything is
 * decoded, the EXIF orientation applied, the image scaled to cover a size×size square (centred),
 * and encoded with no metadata of the original (sharp writes none unless asked to).
 *
 * SVG originals are rasterised by librsvg, which renders the document alone: it runs no script
 * and loads no external resource for a document given as bytes (test/avatar-images.test.ts proves
 * the external `href` is never requested). The answer is never SVG.
 */
import type { Metadata, Sharp } from 'sharp';

type SharpModule = typeof import('sharp')['default'];

/** The longest one resize may take: far more than a large photo needs, so only a hostile image reaches it. */
const RESIZE_TIMEOUT_SECONDS = 5;

/** Originals over this many pixels are refused before decoding (the contract's 40 megapixels). */
const MAX_INPUT_PIXELS = 40_000_000;

export type OutputFormat = 'webp' | 'png' | 'jpeg';
/** What the client may receive: one format, or PNG for images with transparency and JPEG otherwise. */
export type FormatChoice = OutputFormat | 'png-or-jpeg';

export const CONTENT_TYPES: Readonly<Record<OutputFormat, string>> = {
  webp: 'image/webp',
  png: 'image/png',
  jpeg: 'image/jpeg',
};

/** The types the service decodes, decided from the first bytes. */
type OriginalType = 'jpeg' | 'png' | 'gif' | 'webp' | 'avif' | 'svg';

/**
 * Why an original's bytes gave no variant: not an image of a known type (HTML, text, BMP), more
 * pixels than the bound by its header, or a known type that could not be decoded and resized
 * (a broken or cut-off file, a header that cannot be read, an image over the resize's time).
 */
export type ImageFailure = 'not-image' | 'too-many-pixels' | 'decode-error';

export class UnusableImageError extends Error {
  constructor(
    readonly failure: ImageFailure,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'UnusableImageError';
  }
}

export interface ResizedImage {
  readonly body: Buffer;
  readonly format: OutputFormat;
}

/** The type of an original from its magic bytes, or null (HTML, text, anything else). */
function originalType(bytes: Buffer): OriginalType | null {
  const starts = (signature: number[], offset = 0) => signature.every((byte, index) => bytes[offset + index] === byte);
  if (starts([0xff, 0xd8, 0xff])) return 'jpeg';
  if (starts([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'png';
  const ascii = (start: number, end: number) => bytes.subarray(start, end).toString('latin1');
  if (ascii(0, 6) === 'GIF87a' || ascii(0, 6) === 'GIF89a') return 'gif';
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return 'webp';
  if (ascii(4, 8) === 'ftyp' && isAvifBrand(bytes)) return 'avif';
  if (looksLikeSvg(bytes)) return 'svg';
  return null;
}

/** An ISO-BMFF file whose major or compatible brands name AVIF. */
function isAvifBrand(bytes: Buffer): boolean {
  const boxSize = bytes.readUInt32BE(0);
  const end = Math.min(boxSize, bytes.length, 256);
  for (let offset = 8; offset + 4 <= end; offset += 4) {
    if (offset === 12) continue; // the minor version
    const brand = bytes.subarray(offset, offset + 4).toString('latin1');
    if (brand === 'avif' || brand === 'avis') return true;
  }
  return false;
}

/** XML whose first element (after a declaration, comments, a doctype) is `<svg`. */
function looksLikeSvg(bytes: Buffer): boolean {
  const head = bytes
    .subarray(0, 4096)
    .toString('utf8')
    .replace(/^\uFEFF/, '');
  const rest = head.replace(/^(\s|<\?xml[^>]*\?>|<!--[\s\S]*?-->|<!DOCTYPE[^>]*>)*/i, '');
  return /^<svg[\s>]/i.test(rest);
}

/** sharp's process-wide bounds: libvips threads per image, and libvips' operation cache. */
const SHARP_BOUNDS = { threadsPerImage: 1, cacheMegabytes: 16 };

let sharpModule: Promise<SharpModule> | undefined;

/**
 * sharp, loaded on the first resize: libvips adds resident memory that a service that answers no
 * image (AVATAR_PROXY=off, or no profile with an image asked for) need not pay
 * (docs/decisions.md, "sharp loaded on the first resize").
 */
function loadSharp(): Promise<SharpModule> {
  sharpModule ??= import('sharp').then(({ default: sharp }) => {
    sharp.concurrency(SHARP_BOUNDS.threadsPerImage);
    sharp.cache({ memory: SHARP_BOUNDS.cacheMegabytes, files: 0, items: 20 });
    return sharp;
  });
  return sharpModule;
}

/**
 * The size×size variant of `original` in the chosen format, or an UnusableImageError. `choice`
 * `png-or-jpeg` keeps transparency as PNG and gives JPEG to opaque images.
 */
export async function resizeOriginal(original: Buffer, size: number, choice: FormatChoice): Promise<ResizedImage> {
  const type = originalType(original);
  if (type === null) throw new UnusableImageError('not-image', 'the bytes are not an image of a known type');
  const sharp = await loadSharp();
  const header = await readHeader(sharp, original, type);
  if (header.width * header.height > MAX_INPUT_PIXELS) {
    throw new UnusableImageError(
      'too-many-pixels',
      `${header.width}×${header.height} pixels (at most ${MAX_INPUT_PIXELS})`,
    );
  }
  const format = choice === 'png-or-jpeg' ? (header.hasAlpha ? 'png' : 'jpeg') : choice;
  const density = type === 'svg' ? svgDensity(header, size) : undefined;
  try {
    const pipeline = sharp(original, { limitInputPixels: MAX_INPUT_PIXELS, failOn: 'error', density })
      .autoOrient()
      .resize(size, size, { fit: 'cover', position: 'centre' })
      // An image that takes this long (an SVG of heavy filters, say) holds the one resize slot no longer.
      .timeout({ seconds: RESIZE_TIMEOUT_SECONDS });
    const body = await encode(format === 'jpeg' ? pipeline.flatten({ background: '#ffffff' }) : pipeline, format);
    return { body, format };
  } catch (error) {
    throw new UnusableImageError('decode-error', `the ${type} image could not be decoded`, { cause: error });
  }
}

interface Header {
  width: number;
  height: number;
  hasAlpha: boolean;
}

/** Width, height and alpha from the header alone (no pixel is decoded). */
async function readHeader(sharp: SharpModule, original: Buffer, type: OriginalType): Promise<Header> {
  let metadata: Metadata;
  try {
    // No pixel limit here: the header is read to compare the size with the limit, with a clear message.
    metadata = await sharp(original, { limitInputPixels: false }).metadata();
  } catch (error) {
    throw new UnusableImageError('decode-error', `the ${type} header could not be read`, { cause: error });
  }
  const { width, height } = metadata;
  if (width === undefined || height === undefined || width === 0 || height === 0) {
    throw new UnusableImageError('decode-error', `the ${type} image has no size`);
  }
  // Rotated by EXIF, width and height swap; the pixel count does not change.
  return { width, height, hasAlpha: metadata.hasAlpha === true };
}

/** A density at which the SVG's shorter side is drawn at least `size` pixels long (sharp: 72 = 1:1). */
function svgDensity(header: Header, size: number): number {
  const scale = size / Math.min(header.width, header.height);
  // Never drawn larger than the pixel limit allows; never below 1:1.
  const bound = Math.sqrt(MAX_INPUT_PIXELS / (header.width * header.height));
  return 72 * Math.max(1, Math.min(scale, bound));
}

function encode(pipeline: Sharp, format: OutputFormat): Promise<Buffer> {
  switch (format) {
    case 'webp':
      return pipeline.webp({ quality: 82, effort: 2 }).toBuffer();
    case 'png':
      return pipeline.png({ compressionLevel: 6, adaptiveFiltering: false }).toBuffer();
    case 'jpeg':
      return pipeline.jpeg({ quality: 82, mozjpeg: false }).toBuffer();
  }
}
