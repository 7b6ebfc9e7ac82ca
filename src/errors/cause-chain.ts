/**
 * Walking what an error wraps. Drivers, Drizzle and GraphQL wrap the failure that says what
 * happened (a driver's code, a service error) in errors of their own, so whoever classifies or
 * describes an error looks through the chain; this is the one walk every layer uses.
 */

/** How far a chain is followed: wrappers nest a few levels deep, and a cycle must end. */
const MAX_LINKS = 8;

/** What an error wraps: `cause` (Node, postgres.js, Drizzle), unless told another link (GraphQL's `originalError`). */
export type CauseLink = (error: Error) => unknown;

const byCause: CauseLink = (error) => error.cause;

/** `error`, then each error it wraps, outermost first, as far as `next` leads (a non-error ends the chain). */
export function* causeChain(error: unknown, next: CauseLink = byCause): Generator<unknown> {
  let current = error;
  for (let links = 0; links <= MAX_LINKS && current !== undefined && current !== null; links += 1) {
    yield current;
    if (!(current instanceof Error)) return;
    current = next(current);
  }
}

/** The innermost error of the chain: the one that says what actually went wrong. */
export function innermostCause(error: unknown, next: CauseLink = byCause): unknown {
  let innermost = error;
  for (const link of causeChain(error, next)) innermost = link;
  return innermost;
}

/** A string property of an error (`code`, `severity`), wherever the error came from. */
export function stringField(error: unknown, field: string): string | undefined {
  if (typeof error !== 'object' || error === null || !(field in error)) return undefined;
  const value = (error as Record<string, unknown>)[field];
  return typeof value === 'string' ? value : undefined;
}

/**
 * A line for logs that says what failed without the SQL or its parameters (Drizzle's wrapper
 * quotes both, and parameters can hold private e-mails): the innermost error's code and message.
 */
export function describeFailure(error: unknown): string {
  let innermost = error;
  for (const link of causeChain(error)) if (link instanceof Error) innermost = link;
  const code = stringField(innermost, 'code');
  const message = innermost instanceof Error ? innermost.message : String(innermost);
  return code === undefined ? message : `${code}: ${message}`;
}
