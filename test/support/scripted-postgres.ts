/**
 * A PostgreSQL stand-in that speaks just enough of the wire protocol to start sessions and answer
 * one-parameter statements (`select $1::int as x`: one row, the parameter's text as column `x`)
 * and simple commands (`begin`, `commit`, `rollback`: their tag),
 * with no real server behind it. A test sets what the next sessions meet, so it can take a driver
 * through a sequence no real server produces on demand: a backend that dies the instant a
 * statement arrives, then refusals of new sessions, then a healthy server.
 *
 * - `serve`: sessions start (AuthenticationOk, ReadyForQuery) and statements are answered;
 * - `terminate-at-statement`: sessions, open ones included, end with FATAL 57P01 (a terminated
 *   backend) as soon as a statement's Parse arrives, before anything of it is answered;
 * - `refuse`: the startup message of a new session is answered with FATAL and the given
 *   SQLSTATE, then the session ends (a database not accepting connections, a server starting up).
 *
 * Protocol reference: PostgreSQL's "Message Formats" (protocol 3.0).
 */
import net from 'node:net';
import { listenOn } from './tcp-proxy.js';

type ScriptedBehaviour =
  | { kind: 'serve' }
  | { kind: 'terminate-at-statement' }
  | { kind: 'refuse'; code: string; message: string };

export interface ScriptedPostgres {
  /** A postgres:// URL of the stand-in. */
  readonly url: string;
  /** Sessions that sent a startup message, since the start. */
  readonly startups: number;
  /** Connections accepted, since the start. */
  readonly accepted: number;
  /** What sessions meet from now on. */
  behave(behaviour: ScriptedBehaviour): void;
  close(): Promise<void>;
}

const SSL_REQUEST = 80_877_103;

function message(type: string, body: Buffer = Buffer.alloc(0)): Buffer {
  const header = Buffer.alloc(5);
  header.write(type, 0, 'latin1');
  header.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([header, body]);
}

const int16 = (value: number) => {
  const buffer = Buffer.alloc(2);
  buffer.writeInt16BE(value);
  return buffer;
};
const int32 = (value: number) => {
  const buffer = Buffer.alloc(4);
  buffer.writeInt32BE(value);
  return buffer;
};
const cString = (text: string) => Buffer.from(`${text}\0`);

const AUTHENTICATION_OK = message('R', int32(0));
const READY_FOR_QUERY = message('Z', Buffer.from('I'));
const INT4_OID = 23;

function fatal(code: string, text: string): Buffer {
  return message(
    'E',
    Buffer.concat([cString('SFATAL'), cString('VFATAL'), cString(`C${code}`), cString(`M${text}`), Buffer.from([0])]),
  );
}

/** The answers to Describe of a one-parameter statement with one int4 column `x`. */
const DESCRIBED = Buffer.concat([
  message('t', Buffer.concat([int16(1), int32(INT4_OID)])),
  message(
    'T',
    Buffer.concat([int16(1), cString('x'), int32(0), int16(0), int32(INT4_OID), int16(4), int32(-1), int16(0)]),
  ),
]);

/** The first parameter's text of a Bind message. */
function boundParameter(body: Buffer): string | null {
  let offset = body.indexOf(0) + 1; // portal name
  offset = body.indexOf(0, offset) + 1; // statement name
  const formats = body.readInt16BE(offset);
  offset += 2 + formats * 2;
  const count = body.readInt16BE(offset);
  offset += 2;
  if (count === 0) return null;
  const length = body.readInt32BE(offset);
  return length < 0 ? null : body.toString('utf8', offset + 4, offset + 4 + length);
}

/** Answers the extended-protocol messages of a healthy session. */
function serveStatements(socket: net.Socket, type: string, body: Buffer): void {
  switch (type) {
    case 'P':
      socket.write(message('1'));
      break;
    case 'D':
      socket.write(DESCRIBED);
      break;
    case 'B': {
      const value = boundParameter(body);
      const cell = value === null ? int32(-1) : Buffer.concat([int32(Buffer.byteLength(value)), Buffer.from(value)]);
      socket.write(Buffer.concat([message('2'), message('D', Buffer.concat([int16(1), cell]))]));
      break;
    }
    case 'E':
      socket.write(message('C', cString('SELECT 1')));
      break;
    case 'S':
      socket.write(READY_FOR_QUERY);
      break;
    case 'Q': {
      // A simple query (BEGIN, COMMIT, ROLLBACK): its command tag, and nothing else.
      const tag =
        body
          .toString('utf8', 0, body.length - 1)
          .trim()
          .split(/\s+/)[0]
          ?.toUpperCase() ?? '';
      socket.write(Buffer.concat([message('C', cString(tag)), READY_FOR_QUERY]));
      break;
    }
    case 'X':
      socket.end();
      break;
    default:
      break;
  }
}

export async function startScriptedPostgres(host = '127.0.0.1'): Promise<ScriptedPostgres> {
  let behaviour: ScriptedBehaviour = { kind: 'serve' };
  let startups = 0;
  let accepted = 0;
  const open = new Set<net.Socket>();

  const server = net.createServer((socket) => {
    accepted += 1;
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    socket.on('error', () => socket.destroy());
    let buffered = Buffer.alloc(0);
    let started = false;
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      for (;;) {
        if (!started) {
          if (buffered.length < 8) return;
          const length = buffered.readInt32BE(0);
          if (buffered.length < length) return;
          const code = buffered.readInt32BE(4);
          buffered = buffered.subarray(length);
          if (code === SSL_REQUEST) {
            socket.write('N');
            continue;
          }
          started = true;
          startups += 1;
          if (behaviour.kind === 'refuse') {
            socket.end(fatal(behaviour.code, behaviour.message));
            return;
          }
          socket.write(Buffer.concat([AUTHENTICATION_OK, READY_FOR_QUERY]));
          continue;
        }
        if (buffered.length < 5) return;
        const length = buffered.readInt32BE(1);
        if (buffered.length < length + 1) return;
        const type = buffered.toString('latin1', 0, 1);
        const body = buffered.subarray(5, length + 1);
        buffered = buffered.subarray(length + 1);
        if (behaviour.kind === 'terminate-at-statement' && type === 'P') {
          socket.end(fatal('57P01', 'terminating connection due to administrator command'));
          return;
        }
        serveStatements(socket, type, body);
      }
    });
  });

  const port = await listenOn(server, 0, host);
  return {
    url: `postgres://tester@${host}:${port}/scripted`,
    get startups() {
      return startups;
    },
    get accepted() {
      return accepted;
    },
    behave(next) {
      behaviour = next;
    },
    async close() {
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
