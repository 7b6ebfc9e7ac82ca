/**
 * Origin servers for the avatar suites: plain HTTP servers on a loopback address (127.0.0.1 is
 * let through by AVATAR_PRIVATE_ORIGINS in the tests; 127.0.0.2 is not, and must never see a
 * request), each path answered by a handler, every request recorded. And the test images, made
 * with sharp itself.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import sharp from 'sharp';

export type OriginHandler = (req: IncomingMessage, res: ServerResponse) => void;

export interface ImageOrigin {
  /** `http://<host>:<port>` */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /** Paths requested, in order (each request once). */
  readonly requests: string[];
  /** How many requests asked for `path`. */
  count(path: string): number;
  /** Resolves once a request for `path` has arrived (at once when one has). */
  requested(path: string): Promise<void>;
  route(path: string, handler: OriginHandler): void;
  close(): Promise<void>;
}

export async function startImageOrigin(host: string): Promise<ImageOrigin> {
  const routes = new Map<string, OriginHandler>();
  const requests: string[] = [];
  const waiting: Array<{ path: string; arrived: () => void }> = [];
  const sockets = new Set<import('node:net').Socket>();
  const server = http.createServer((req, res) => {
    const path = req.url ?? '/';
    requests.push(path);
    for (const waiter of waiting.filter((entry) => entry.path === path)) {
      waiting.splice(waiting.indexOf(waiter), 1);
      waiter.arrived();
    }
    const handler = routes.get(path);
    if (handler === undefined) {
      res.writeHead(404).end();
      return;
    }
    handler(req, res);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    host,
    port,
    requests,
    count: (path) => requests.filter((requested) => requested === path).length,
    requested: (path) =>
      requests.includes(path)
        ? Promise.resolve()
        : new Promise<void>((arrived) => {
            waiting.push({ path, arrived });
          }),
    route: (path, handler) => routes.set(path, handler),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A handler that answers `body` with `type`. */
export const serve =
  (body: Buffer | string, type = 'image/jpeg'): OriginHandler =>
  (_req, res) => {
    res.writeHead(200, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
  };

/**
 * A handler that leaves every request unanswered (an origin that never answers) until `release`,
 * which answers those held and every later one with `then`.
 */
export function holding(): { handler: OriginHandler; release(then: OriginHandler): void } {
  const held: Array<[IncomingMessage, ServerResponse]> = [];
  let answer: OriginHandler | undefined;
  return {
    handler: (req, res) => {
      if (answer === undefined) held.push([req, res]);
      else answer(req, res);
    },
    release(then) {
      answer = then;
      for (const [req, res] of held.splice(0)) then(req, res);
    },
  };
}

/** A handler that redirects to `location`. */
export const redirect =
  (location: string, status = 302): OriginHandler =>
  (_req, res) => {
    res.writeHead(status, { Location: location }).end();
  };

/**
 * A 2000×1500 JPEG stored sideways: red left half, blue right half, with EXIF orientation 6
 * (shown rotated a quarter turn clockwise: red on top) and EXIF text that must not reach clients.
 */
export function sidewaysJpeg(width = 2000, height = 1500): Promise<Buffer> {
  const half = Math.floor(width / 2);
  return sharp({ create: { width, height, channels: 3, background: '#0000ff' } })
    .composite([{ input: { create: { width: half, height, channels: 3, background: '#ff0000' } }, left: 0, top: 0 }])
    .withExif({ IFD0: { Copyright: 'secret-exif-copyright', Artist: 'secret-exif-artist' } })
    .withMetadata({ orientation: 6 })
    .jpeg({ quality: 90 })
    .toBuffer();
}

/** A 400×400 PNG, transparent but for an opaque green square in the middle. */
export function transparentPng(): Promise<Buffer> {
  return sharp({ create: { width: 400, height: 400, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } })
    .composite([
      { input: { create: { width: 200, height: 200, channels: 4, background: '#00ff00ff' } }, left: 100, top: 100 },
    ])
    .png()
    .toBuffer();
}

/** A PNG whose header claims `width`×`height` pixels, with hardly any pixel data behind it. */
export function claimingPng(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const typed = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(zlib.crc32(typed));
    return Buffer.concat([length, typed, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8 bits, RGB
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const pixels = zlib.deflateSync(Buffer.alloc(1024));
  return Buffer.concat([signature, chunk('IHDR', header), chunk('IDAT', pixels), chunk('IEND', Buffer.alloc(0))]);
}

/** The colour of a pixel of an encoded image, as [r, g, b, a]. */
export async function pixelAt(image: Buffer, x: number, y: number): Promise<[number, number, number, number]> {
  const { data, info } = await sharp(image).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  const offset = (y * info.width + x) * 4;
  return [data[offset] ?? -1, data[offset + 1] ?? -1, data[offset + 2] ?? -1, data[offset + 3] ?? -1];
}
