/**
 * Clients of the live updates, as apps would use them: graphql-sse's client (distinct
 * connections mode), graphql-ws's client over the `ws` package, and a plain HTTP reader of the
 * REST event stream (the browser's EventSource is driven in live-updates-browser.test.ts).
 */
import http from 'node:http';
import { createClient as createSseClient } from 'graphql-sse';
import { createClient as createWsClient, type Client as WsClient } from 'graphql-ws';
import WebSocket from 'ws';
import { eventually } from './eventually.js';

export const PROFILE_CHANGED = /* GraphQL */ `
  subscription Watch($names: [String!]!) {
    profileChanged(names: $names) { name profile { name description records { key raw } } }
  }
`;

export interface ProfileChangedData {
  profileChanged: {
    name: string;
    profile: { name: string; description: string; records: Array<{ key: string; raw: unknown }> } | null;
  };
}

/** What a subscriber has received so far, and when. */
export interface Received<T> {
  readonly events: T[];
  readonly times: number[];
  /** Rejections and errors of the stream, in order. */
  readonly errors: unknown[];
  /** Whether the stream ended (completed, closed or failed). */
  ended: boolean;
  /** Resolves once `count` events arrived; rejects after `timeoutMs`. */
  waitFor(count: number, timeoutMs?: number): Promise<T[]>;
  /** Resolves once the stream ended; rejects after `timeoutMs`. */
  waitForEnd(timeoutMs?: number): Promise<void>;
  stop(): void;
}

function received<T>(stop: () => void): Received<T> {
  const state: Received<T> = {
    events: [],
    times: [],
    errors: [],
    ended: false,
    async waitFor(count, timeoutMs = 5000) {
      const arrived = () => {
        if (state.events.length >= count) return true;
        throw new Error(`${state.events.length} so far`);
      };
      await eventually(arrived, { what: `${count} events`, withinMs: timeoutMs, everyMs: 10 });
      return state.events;
    },
    async waitForEnd(timeoutMs = 5000) {
      await eventually(() => state.ended, { what: 'the end of the stream', withinMs: timeoutMs, everyMs: 10 });
    },
    stop,
  };
  return state;
}

/** A graphql-sse subscription ("distinct connections": one SSE request per operation). */
export function subscribeOverSse(
  url: string,
  names: readonly string[],
  headers: Record<string, string> = {},
): Received<ProfileChangedData> {
  const client = createSseClient({ url: `${url}/graphql`, retryAttempts: 0, headers });
  return subscribeProfileChanged(
    (payload, sink) => client.subscribe<ProfileChangedData>(payload, sink),
    names,
    () => client.dispose(),
  );
}

/** A graphql-ws client on `/graphql`; each `subscribe` is one operation on its one connection. */
export function webSocketClient(url: string): WsClient {
  return createWsClient({
    url: `${url.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    lazy: true,
  });
}

export function subscribeOverWebSocket(client: WsClient, names: readonly string[]): Received<ProfileChangedData> {
  return subscribeProfileChanged((payload, sink) => client.subscribe<ProfileChangedData>(payload, sink), names);
}

interface ProfileChangedSink {
  next(result: { errors?: unknown; data?: ProfileChangedData | null }): void;
  error(error: unknown): void;
  complete(): void;
}

/** Subscribes to PROFILE_CHANGED through either client's `subscribe`, recording what arrives. */
function subscribeProfileChanged(
  subscribe: (
    payload: { query: string; variables: { names: readonly string[] } },
    sink: ProfileChangedSink,
  ) => () => void,
  names: readonly string[],
  dispose: () => void = () => {},
): Received<ProfileChangedData> {
  let unsubscribe: (() => void) | undefined;
  const state = received<ProfileChangedData>(() => {
    unsubscribe?.();
    dispose();
  });
  unsubscribe = subscribe(
    { query: PROFILE_CHANGED, variables: { names } },
    {
      next: (result) => {
        if (result.errors !== undefined) state.errors.push(result.errors);
        if (result.data != null) {
          state.events.push(result.data);
          state.times.push(Date.now());
        }
      },
      error: (error) => {
        state.errors.push(error);
        state.ended = true;
      },
      complete: () => {
        state.ended = true;
      },
    },
  );
  return state;
}

/** One event of a REST stream: its name and its data lines joined. */
interface StreamEvent {
  event: string;
  data: string;
}

export interface RestStream extends Received<StreamEvent> {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The whole body so far (comments included). */
  text: string;
}

/** `GET /api/{name}/events` on a connection of its own; resolves once the answer's head arrived. */
export function openRestStream(url: string, name: string, headers: Record<string, string> = {}): Promise<RestStream> {
  return new Promise((resolve, reject) => {
    const request = http.get(`${url}/api/${encodeURIComponent(name)}/events`, { agent: false, headers }, (response) => {
      const stream = Object.assign(
        received<StreamEvent>(() => request.destroy()),
        { status: response.statusCode ?? 0, headers: response.headers, text: '' },
      );
      let pending = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        stream.text += chunk;
        pending += chunk;
        let end = pending.indexOf('\n\n');
        while (end >= 0) {
          const block = pending.slice(0, end);
          pending = pending.slice(end + 2);
          end = pending.indexOf('\n\n');
          const lines = block.split('\n');
          const event = lines.find((line) => line.startsWith('event: '))?.slice(7);
          if (event === undefined) continue;
          const data = lines.filter((line) => line.startsWith('data: ')).map((line) => line.slice(6));
          stream.events.push({ event, data: data.join('\n') });
          stream.times.push(Date.now());
        }
      });
      response.on('close', () => {
        stream.ended = true;
      });
      response.on('error', (error) => {
        stream.errors.push(error);
        stream.ended = true;
      });
      resolve(stream);
    });
    request.on('error', reject);
  });
}
