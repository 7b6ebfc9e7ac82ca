/**
 * The HTTP routing table of the process. Each concern (GraphQL, REST, operations) registers its
 * own routes; anything unmatched is a JSON 404.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import Router from 'find-my-way';
import { sendError } from './respond.js';

export type AppRouter = Router.Instance<Router.HTTPVersion.V1>;

export interface RouterOptions {
  /**
   * Gets first say on a URL whose percent-encoding cannot be decoded; returns true when it
   * answered. Otherwise such a URL is a 404 like any unknown path.
   */
  answerBadUrl?: (req: IncomingMessage, res: ServerResponse) => boolean;
}

/**
 * Long enough for any valid name ID, percent-encoded, even when sent decomposed (NFD): 127 code
 * points may decompose into about three times as many, each up to 3 UTF-8 bytes of 3 characters
 * encoded.
 */
export const MAX_PARAM_LENGTH = 4096;

export function createRouter(options: RouterOptions = {}): AppRouter {
  return Router({
    ignoreTrailingSlash: false,
    maxParamLength: MAX_PARAM_LENGTH,
    defaultRoute: (req: IncomingMessage, res: ServerResponse) => sendError(req, res, 404, 'Not found'),
    onBadUrl: (_path: string, req: IncomingMessage, res: ServerResponse) => {
      if (options.answerBadUrl?.(req, res) !== true) sendError(req, res, 404, 'Not found');
    },
  });
}
