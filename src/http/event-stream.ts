/**
 * A `text/event-stream` answer (Server-Sent Events) written on node:http: named events whose
 * data is sent as it is (split into `data:` lines, which a client joins back with line feeds, so
 * any text arrives byte for byte), comment heartbeats so proxies keep an idle stream open, and a
 * bound on what may wait unsent for a client that does not read.
 */
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';

/** Past this many bytes written and not yet taken by the client, it is too far behind. */
const MAX_STREAM_BACKLOG_BYTES = 1024 * 1024;
const HEARTBEAT_INTERVAL_MS = 15_000;
/**
 * What `EventSource` waits before it reconnects after the stream ends (its `retry` field): a
 * server that stops (a deploy) is back, or another instance answers, well within it, and a
 * client that resumes with `Last-Event-ID` misses nothing meanwhile.
 */
const RECONNECT_AFTER_MS = 1000;

export class EventStream {
  #opened = false;
  #heartbeat: NodeJS.Timeout | undefined;

  constructor(
    private readonly res: ServerResponse,
    private readonly heartbeatMs = HEARTBEAT_INTERVAL_MS,
  ) {
    res.once('close', () => clearInterval(this.#heartbeat));
  }

  /** Writes the status line and headers (once) and starts the heartbeat. */
  open(headers: OutgoingHttpHeaders = {}): void {
    if (this.#opened) return;
    this.#opened = true;
    this.res.writeHead(200, {
      ...headers,
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      // nginx buffers answers unless told not to; a buffered event stream arrives late or never.
      'X-Accel-Buffering': 'no',
    });
    // A first line gets the headers through proxies (and browsers that wait for a body).
    this.res.write(`: stream open\nretry: ${RECONNECT_AFTER_MS}\n\n`);
    this.#heartbeat = setInterval(() => this.comment('heartbeat'), this.heartbeatMs);
    this.#heartbeat.unref();
  }

  /** Bytes written and not yet taken by the client. */
  backlog(): number {
    return this.res.writableLength + (this.res.socket?.writableLength ?? 0);
  }

  /**
   * Sends an event, with the id a client resumes after (`Last-Event-ID`) when given; false
   * (nothing written) when the client is too far behind or gone.
   */
  send(event: string, data: string | Buffer, id?: string): boolean {
    // An event for a stream that has ended (its client left, a HEAD) has no one to reach.
    if (this.res.writableEnded || this.res.destroyed) return false;
    this.open();
    if (this.backlog() > MAX_STREAM_BACKLOG_BYTES) return false;
    const lines = data.toString().split(/\r\n|\r|\n/);
    const idLine = id === undefined ? '' : `id: ${id}\n`;
    this.res.write(`${idLine}event: ${event}\n${lines.map((line) => `data: ${line}\n`).join('')}\n`);
    return true;
  }

  comment(text: string): void {
    if (!this.res.writableEnded) this.res.write(`: ${text}\n\n`);
  }

  /** Ends the stream cleanly (the client's EventSource reconnects, to another instance if this one stops). */
  end(): void {
    clearInterval(this.#heartbeat);
    if (!this.res.writableEnded) this.res.end();
  }

  /** Cuts the connection: the client is not reading. */
  destroy(): void {
    clearInterval(this.#heartbeat);
    this.res.destroy();
  }
}
