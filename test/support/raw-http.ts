/**
 * HTTP requests whose path goes out exactly as written. `fetch` normalises URLs (resolves `..`,
 * re-encodes characters), so suites that send hostile paths use node:http instead, through one
 * keep-alive agent per client.
 */
import { Agent, get, type IncomingHttpHeaders, type OutgoingHttpHeaders, request } from 'node:http';

export interface RawResponse {
  status: number;
  statusMessage: string;
  headers: IncomingHttpHeaders;
  /** The header lines as sent, names in their case: name, value, name, value… */
  rawHeaders: string[];
  /** The body as UTF-8 text ('' for HEAD and 304). */
  text: string;
}

interface RawRequest {
  method?: string;
  headers?: OutgoingHttpHeaders;
  body?: string;
}

export interface RawClient {
  /** Sends `path` (everything after host and port) byte for byte; rejects when no answer comes within the bound. */
  send(path: string, options?: RawRequest): Promise<RawResponse>;
  close(): void;
}

/** A client for the server at `baseUrl` (http://127.0.0.1:port). */
export function rawClient(baseUrl: string, timeoutMs = 10_000): RawClient {
  const { hostname, port } = new URL(baseUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  return {
    send(path, { method = 'GET', headers = {}, body } = {}) {
      return new Promise<RawResponse>((resolve, reject) => {
        // Node sends no Content-Length for a DELETE or OPTIONS body by itself; without one the
        // server would read the body as the start of the next request on the connection.
        const framing = body === undefined ? {} : { 'content-length': Buffer.byteLength(body) };
        const req = request(
          { host: hostname, port: Number(port), path, method, headers: { ...framing, ...headers }, agent },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('error', reject);
            res.on('end', () =>
              resolve({
                status: res.statusCode ?? 0,
                statusMessage: res.statusMessage ?? '',
                headers: res.headers,
                rawHeaders: res.rawHeaders,
                text: Buffer.concat(chunks).toString('utf8'),
              }),
            );
          },
        );
        req.setTimeout(timeoutMs, () =>
          req.destroy(new Error(`no answer to ${method} ${path.slice(0, 200)} within ${timeoutMs} ms`)),
        );
        req.on('error', reject);
        req.end(body);
      });
    },
    close: () => agent.destroy(),
  };
}

/** A browser's CORS preflight from https://app.example for a `method` request to `url`, with `requestHeaders` when given. */
export function corsPreflight(url: string, method: string, requestHeaders?: string): Promise<Response> {
  const headers: Record<string, string> = { origin: 'https://app.example', 'access-control-request-method': method };
  if (requestHeaders !== undefined) headers['access-control-request-headers'] = requestHeaders;
  return fetch(url, { method: 'OPTIONS', headers });
}

/** The status of a plain GET on a new connection; rejects when no connection can be made. */
export function statusOnNewConnection(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    }).on('error', reject);
  });
}
