/**
 * The one walk of an error's cause chain (src/errors/cause-chain.ts), which decides what the logs
 * say of a failure and what the database layer calls unavailable.
 */
import { GraphQLError } from 'graphql';
import { describe, expect, it } from 'vitest';
import { isDatabaseUnavailable } from '../src/db/driver-errors.js';
import { causeChain, describeFailure, innermostCause } from '../src/errors/cause-chain.js';

/** What Drizzle throws: its own message quotes the SQL and the parameters, the driver's error is the cause. */
const drizzleFailure = (cause: unknown) =>
  new Error('Failed query: select * from profiles where email = $1\nparams: someone@example.com', { cause });
const driverError = (code: string, message: string) => Object.assign(new Error(message), { code });

describe('the cause chain', () => {
  it('describes a failure by its innermost error, never the wrapper that quotes SQL and parameters', () => {
    const failure = drizzleFailure(driverError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432'));
    expect(describeFailure(failure)).toBe('ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:5432');
    expect(describeFailure(failure)).not.toContain('someone@example.com');
  });

  it('ends on a chain that loops, as a hand-made error can', () => {
    const first = new Error('first');
    const second = new Error('second', { cause: first });
    first.cause = second;
    expect([...causeChain(first)].length).toBeLessThanOrEqual(9);
    expect(typeof describeFailure(first)).toBe('string');
    expect(isDatabaseUnavailable(first)).toBe(false);
  });

  it("follows GraphQL's originalError when told to, down to the error a resolver threw", () => {
    const thrown = driverError('57P01', 'terminating connection due to administrator command');
    const wrapped = new GraphQLError('outer', { originalError: new GraphQLError('inner', { originalError: thrown }) });
    const byOriginalError = (link: Error) => (link instanceof GraphQLError ? link.originalError : undefined);
    expect(innermostCause(wrapped, byOriginalError)).toBe(thrown);
  });

  it('finds an unavailability code anywhere along the chain, and stops at a non-error', () => {
    expect(isDatabaseUnavailable(drizzleFailure(driverError('57P03', 'the database system is starting up')))).toBe(
      true,
    );
    expect(isDatabaseUnavailable(drizzleFailure('a string cause'))).toBe(false);
    expect(innermostCause(drizzleFailure('a string cause'))).toBe('a string cause');
  });
});
