/**
 * The generated avatar of a name without an image: a square SVG with the upper-cased first
 * character of the local part on a background colour derived from the name (the same name always
 * gets the same colour). The document has no script, no link and no external resource, and every
 * text in it is XML-escaped, so it is safe to open directly.
 */
import { createHash } from 'node:crypto';

/**
 * Part of the avatar version (src/service/avatars.ts): raise it whenever the drawing changes, so
 * URLs cached as immutable (`v=`) change with it.
 */
export const AVATAR_DRAWING_REVISION = 1;

/** A constant attribute value (single quotes inside the double-quoted attribute). */
const FONT_FAMILY = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Noto Sans', 'Noto Sans CJK JP', sans-serif";

/**
 * The first character (code point) of a local part, upper-cased; kept as it is where upper case
 * would make it longer (`ß` → `SS`). Valid local parts start with a letter or digit.
 */
export function initialOf(localPart: string): string {
  const first = String.fromCodePoint(localPart.codePointAt(0) ?? 0x3f);
  const upper = first.toUpperCase();
  return [...upper].length === 1 ? upper : first;
}

/** A colour of the name as `#rrggbb`: a hue from its hash, saturated and dark enough for white text. */
export function avatarColour(canonicalName: string): string {
  const digest = createHash('sha256').update(canonicalName).digest();
  const hue = digest.readUInt16BE(0) % 360;
  return hslToHex(hue, 0.55, 0.4);
}

export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

/** The SVG document of `canonicalName`'s avatar, `size`×`size` pixels. */
export function initialsSvg(canonicalName: string, size: number): string {
  const at = canonicalName.indexOf('@');
  const initial = escapeXml(initialOf(at < 0 ? canonicalName : canonicalName.slice(0, at)));
  const half = size / 2;
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${size}" height="${size}" viewBox="0 0 ${size} ${size}" ` +
    `role="img" aria-label="${initial}">` +
    `<rect width="${size}" height="${size}" fill="${avatarColour(canonicalName)}"/>` +
    `<text x="${half}" y="${half}" dy="0.35em" text-anchor="middle" fill="#ffffff" ` +
    `font-family="${FONT_FAMILY}" font-size="${half}" font-weight="600">${initial}</text>` +
    '</svg>'
  );
}

function hslToHex(hue: number, saturation: number, lightness: number): string {
  const chroma = (1 - Math.abs(2 * lightness - 1)) * saturation;
  const x = chroma * (1 - Math.abs(((hue / 60) % 2) - 1));
  const m = lightness - chroma / 2;
  const sector = Math.floor(hue / 60);
  const [r, g, b] = [
    [chroma, x, 0],
    [x, chroma, 0],
    [0, chroma, x],
    [0, x, chroma],
    [x, 0, chroma],
    [chroma, 0, x],
  ][sector] as [number, number, number];
  const hex = (value: number) =>
    Math.round((value + m) * 255)
      .toString(16)
      .padStart(2, '0');
  return `#${hex(r)}${hex(g)}${hex(b)}`;
}
