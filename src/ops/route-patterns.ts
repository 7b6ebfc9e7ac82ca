/**
 * The route pattern a request matched (`/api/:name`, not `/api/demo@me`), for log lines and
 * metric labels: a bounded set of values that never holds a name or a query string.
 *
 * find-my-way tells a handler its parameters but not the pattern it was registered with, so the
 * registrations are mirrored into a second router whose routes carry their pattern as store.
 */
import type { HTTPMethod } from 'find-my-way';
import Router from 'find-my-way';
import { type AppRouter, MAX_PARAM_LENGTH } from '../http/router.js';

/** The label of a request that matched no route (404s of every kind). */
export const UNMATCHED_ROUTE = 'unmatched';

export interface RoutePatterns {
  /** The pattern `method url` matches, or UNMATCHED_ROUTE. */
  patternOf(method: string | undefined, url: string | undefined): string;
}

const noop = (): void => {};

/**
 * Mirrors every route registered on `router` from now on (call it before any registration).
 * Registration goes through `on` for the shorthand methods too, so wrapping it sees them all.
 */
export function trackRoutePatterns(router: AppRouter): RoutePatterns {
  const mirror = Router({ ignoreTrailingSlash: false, maxParamLength: MAX_PARAM_LENGTH });
  const register = router.on.bind(router) as (...args: unknown[]) => void;
  let depth = 0;
  router.on = ((...args: unknown[]) => {
    // find-my-way registers an optional parameter's two forms through `on` again; the mirror
    // expands the outer call itself.
    depth += 1;
    try {
      register(...args);
    } finally {
      depth -= 1;
    }
    if (depth === 0) {
      const [methods, path, maybeOptions] = args as [HTTPMethod | HTTPMethod[], string, unknown];
      const options = typeof maybeOptions === 'object' && maybeOptions !== null ? maybeOptions : {};
      mirror.on(methods, path, options, noop, path);
    }
  }) as AppRouter['on'];

  return {
    patternOf(method, url) {
      if (method === undefined || url === undefined) return UNMATCHED_ROUTE;
      const found = mirror.find(method as HTTPMethod, url);
      return typeof found?.store === 'string' ? found.store : UNMATCHED_ROUTE;
    },
  };
}
