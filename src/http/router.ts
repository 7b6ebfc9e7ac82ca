/**
 * The routing table of the process (find-my-way, the router Fastify uses). Each concern (REST,
 * GraphQL, operations) registers its routes; a route carries its pattern, so the request log
 * and metrics label a request by the route it matched with the one lookup that dispatches it.
 *
 * Beyond dispatch: a route asked with a method it does not serve answers 405 with `Allow`, or,
 * for a CORS route, the CORS preflight of the one CORS policy; a URL whose percent-encoding
 * cannot be decoded goes to `onBadUrl`; anything else is a JSON 404.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import { answerPreflight, isPreflight } from './cors.js';
import { sendError } from './respond.js';

export type Params = Readonly<Record<string, string | undefined>>;
export type RouteHandler = (req: IncomingMessage, res: ServerResponse, params: Params) => void;

interface Route {
  /** The registered pattern, e.g. `/api/:name`: the label of logs and metrics. */
  readonly pattern: string;
  readonly methods: readonly HTTPMethod[];
  /** Whether browsers of any origin may call it (the CORS policy of src/http/cors.ts). */
  readonly cors: boolean;
}

export interface RouteOptions {
  cors?: boolean;
}

/** What a request matched: the route (undefined for 404s and bad URLs) and how to answer. */
export interface Match {
  route: Route | undefined;
  answer(): void;
}

export interface RouterOptions {
  /**
   * Answers a request whose URL cannot be decoded; returns false to leave it a 404. Knows the
   * path the client asked for, which no route could match.
   */
  onBadUrl?: (req: IncomingMessage, res: ServerResponse) => boolean;
}

/**
 * Long enough for any valid name ID, percent-encoded, even when sent decomposed (NFD): 127 code
 * points may decompose into about three times as many, each up to 3 UTF-8 bytes of 3 characters
 * encoded.
 */
const MAX_PARAM_LENGTH = 4096;

type Store = Route & { handler: RouteHandler };

/** The methods a route may be asked with; those it does not serve answer 405 (or a preflight). */
const METHODS: readonly HTTPMethod[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE'];

export class Router {
  private readonly table = FindMyWay({
    ignoreTrailingSlash: false,
    maxParamLength: MAX_PARAM_LENGTH,
    // Makes `find` return a handle without a store for an undecodable URL (see `match`).
    onBadUrl: () => {},
  });

  constructor(private readonly options: RouterOptions = {}) {}

  /**
   * Registers `handler` for `methods` on `pattern`, and the other methods on the same pattern:
   * they answer 405 with `Allow`, or, on a CORS route, a CORS preflight.
   */
  on(methods: readonly HTTPMethod[], pattern: string, handler: RouteHandler, options: RouteOptions = {}): void {
    const route: Route = { pattern, methods, cors: options.cors ?? false };
    // The handler find-my-way calls is unused: `match` dispatches through the store.
    this.table.on([...methods], pattern, () => {}, { ...route, handler } satisfies Store);
    const others = METHODS.filter((method) => !methods.includes(method));
    const refuse: RouteHandler = (req, res) => {
      if (route.cors && isPreflight(req)) answerPreflight(res, methods);
      else sendError(req, res, 405, 'Method not allowed', { Allow: methods.join(', ') });
    };
    if (others.length > 0) this.table.on([...others], pattern, () => {}, { ...route, handler: refuse } satisfies Store);
  }

  match(req: IncomingMessage, res: ServerResponse): Match {
    const found = this.table.find((req.method ?? 'GET') as HTTPMethod, req.url ?? '/');
    if (found === null) return { route: undefined, answer: () => sendError(req, res, 404, 'Not found') };
    const store = found.store as Store | null;
    // find-my-way's handle for an undecodable URL has no store.
    if (store === null) return { route: undefined, answer: () => this.answerBadUrl(req, res) };
    const params = found.params as Params;
    return { route: store, answer: () => store.handler(req, res, params) };
  }

  private answerBadUrl(req: IncomingMessage, res: ServerResponse): void {
    if (this.options.onBadUrl?.(req, res) !== true) sendError(req, res, 404, 'Not found');
  }
}
