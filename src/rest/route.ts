/**
 * One REST route as a declaration: its router pattern, the methods it serves and how its handler
 * is built from the dependencies. The route list (routes.ts) registers each one.
 */
import type { HTTPMethod } from 'find-my-way';
import type { RouteHandler } from '../http/router.js';
import type { RestDependencies } from './dependencies.js';

export const GET_HEAD: readonly HTTPMethod[] = ['GET', 'HEAD'];

export interface RestRoute {
  /** The router pattern, e.g. `/api/:name/avatar`. */
  readonly pattern: string;
  readonly methods: readonly HTTPMethod[];
  /** Builds the handler once, at start-up. */
  readonly handler: (deps: RestDependencies) => RouteHandler;
}
