/**
 * One REST route as one declaration: its router pattern, the methods it serves, how its handler
 * is built from the dependencies, and its OpenAPI description. The route list (routes.ts)
 * registers each one and the OpenAPI document (openapi.ts) is assembled from the same list, so a
 * path and its description cannot part.
 */
import type { HTTPMethod } from 'find-my-way';
import type { RouteHandler } from '../http/router.js';
import type { RestDependencies } from './dependencies.js';
import type { Operation, Parameter } from './openapi-components.js';

export const GET_HEAD: readonly HTTPMethod[] = ['GET', 'HEAD'];

export interface RestRoute {
  /** The router pattern, e.g. `/api/:name/avatar`. */
  readonly pattern: string;
  readonly methods: readonly HTTPMethod[];
  /** Builds the handler once, at start-up. */
  readonly handler: (deps: RestDependencies) => RouteHandler;
  /** Absent only for a route that is no path of the contract (the /api/* 404). */
  readonly openApi?: PathDescription;
}

/**
 * The OpenAPI description of a route's path. HEAD is described from GET (same answers, no
 * bodies), and the 405 of the methods the route does not serve is added to every operation.
 */
export interface PathDescription {
  /**
   * Each `:parameter` of the pattern by its router name; the document writes the path with the
   * parameter's own name (`/api/:name` is `/api/{name_id}`).
   */
  readonly pathParameters?: Readonly<Record<string, Parameter>>;
  readonly get?: Operation;
  readonly post?: Operation;
  readonly delete?: Operation;
}
