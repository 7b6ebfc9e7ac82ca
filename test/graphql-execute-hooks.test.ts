/**
 * The execute stage of prepared operations (src/graphql/execution/execute-hooks.ts) against
 * envelop's own: generated plugins (each choosing or wrapping the execute function, extending
 * the context, stopping execution, answering after execution, synchronously or not, throwing, on
 * single and streamed results) run through both, and what the hooks saw, the context, and the
 * result or error must be the same.
 */
import fc from 'fast-check';
import { type ExecutionArgs, type ExecutionResult, parse } from 'graphql';
import { envelop, type Plugin } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { executeHooks, executeStage } from '../src/graphql/execution/execute-hooks.js';

type ExecuteHook = NonNullable<Plugin['onExecute']>;

/** What a generated plugin does in its `onExecute` hook and after. */
interface Behaviour {
  /** Choose an execute function: its own, one wrapping the one chosen before, or none. */
  execute: 'none' | 'own' | 'wrap';
  /** Whether the execute function it chooses answers with a promise, or a stream of two results. */
  answer: 'sync' | 'async' | 'stream';
  extend: boolean;
  stop: boolean;
  /** Whether the hook itself returns a promise. */
  asyncHook: boolean;
  throws: 'never' | 'sync' | 'async';
  /**
   * An `onExecuteDone` that changes the result (sync or async), and for a stream, hooks on its
   * values and end (given at once or as a promise).
   */
  done: 'none' | 'sync' | 'async' | 'stream' | 'asyncStream';
}

const behaviour = fc.record<Behaviour>({
  execute: fc.constantFrom('none', 'own', 'wrap'),
  answer: fc.constantFrom('sync', 'async', 'stream'),
  extend: fc.boolean(),
  // Rare, as throwing is: either ends what the hooks after it would show.
  stop: fc.constantFrom(false, false, false, false, true),
  asyncHook: fc.boolean(),
  throws: fc.constantFrom('never', 'never', 'never', 'never', 'never', 'never', 'sync', 'async'),
  done: fc.constantFrom('none', 'sync', 'async', 'stream', 'asyncStream'),
});

async function* twoResults(tag: string): AsyncGenerator<ExecutionResult> {
  yield { data: { first: tag } };
  yield { data: { second: tag } };
}

function tagged(result: ExecutionResult, tag: string): ExecutionResult {
  return { ...result, extensions: { ...result.extensions, [tag]: true } };
}

/** The plugins of `behaviours`, writing what each hook saw into `log`. */
function pluginsOf(behaviours: readonly Behaviour[], log: string[]): Plugin[] {
  return behaviours.map((b, index) => {
    const tag = `p${index}`;
    const onExecute: ExecuteHook = ({ executeFn, setExecuteFn, setResultAndStopExecution, extendContext, context }) => {
      log.push(`${tag} saw ${String((executeFn as { tag?: string }).tag)} ${JSON.stringify(context)}`);
      const act = () => {
        if (b.throws !== 'never') throw new Error(`${tag} refused`);
        if (b.extend) extendContext({ [tag]: index });
        if (b.execute !== 'none') {
          const previous = executeFn;
          const chosen = Object.assign(
            (args: ExecutionArgs) => {
              log.push(`${tag} executes with ${JSON.stringify(args.contextValue)}`);
              if (b.execute === 'wrap') {
                const inner = previous(args) as ExecutionResult | Promise<ExecutionResult>;
                return inner instanceof Promise ? inner.then((r) => tagged(r, tag)) : tagged(inner, tag);
              }
              if (b.answer === 'stream') return twoResults(tag);
              const result: ExecutionResult = { data: { by: tag } };
              return b.answer === 'async' ? Promise.resolve(result) : result;
            },
            { tag },
          );
          setExecuteFn(chosen as never);
        }
        if (b.stop) setResultAndStopExecution({ data: { stoppedBy: tag } });
        if (b.done === 'none') return undefined;
        return {
          onExecuteDone: ({ result, setResult }: { result: unknown; setResult(next: never): void }) => {
            const streamed = typeof result === 'object' && result !== null && Symbol.asyncIterator in result;
            log.push(`${tag} done with ${streamed ? 'a stream' : JSON.stringify(result)}`);
            if (streamed) {
              if (b.done !== 'stream' && b.done !== 'asyncStream') return undefined;
              const hooks = {
                onNext: ({
                  result: value,
                  setResult: setValue,
                }: {
                  result: ExecutionResult;
                  setResult(n: never): void;
                }) => {
                  log.push(`${tag} next ${JSON.stringify(value)}`);
                  const change = () => setValue(tagged(value, tag) as never);
                  if (b.done === 'asyncStream') return Promise.resolve().then(change);
                  change();
                  return undefined;
                },
                onEnd: () => log.push(`${tag} end`),
              };
              return b.done === 'stream' ? hooks : Promise.resolve(hooks);
            }
            const change = () => setResult(tagged(result as ExecutionResult, tag) as never);
            if (b.done === 'async' || b.done === 'asyncStream') return Promise.resolve().then(change);
            change();
            return undefined;
          },
        };
      };
      if (b.throws === 'async') return Promise.resolve().then(act);
      return b.asyncHook ? Promise.resolve().then(act) : act();
    };
    return { onExecute };
  });
}

/** Runs `execute` with fresh plugins and log; what came out, with what the hooks saw. */
async function outcome(
  behaviours: readonly Behaviour[],
  execute: (plugins: Plugin[], args: ExecutionArgs) => unknown,
): Promise<unknown> {
  const log: string[] = [];
  const context: Record<string, unknown> = { request: 'r' };
  const args: ExecutionArgs = {
    schema: {} as never,
    document: parse('{ a }'),
    contextValue: context,
    variableValues: { n: 1 },
  };
  let result: unknown;
  try {
    result = await execute(pluginsOf(behaviours, log), args);
  } catch (error) {
    result = { threw: (error as Error).message };
  }
  if (typeof result === 'object' && result !== null && Symbol.asyncIterator in result) {
    const values: unknown[] = [];
    for await (const value of result as AsyncIterable<unknown>) values.push(value);
    result = { streamed: values };
  }
  return { result, context, log };
}

const throughEnvelop = (plugins: Plugin[], args: ExecutionArgs) =>
  envelop({ plugins: plugins as never[] })().execute(args);

const throughStage = (plugins: Plugin[], args: ExecutionArgs) =>
  executeStage(plugins.map((plugin) => plugin.onExecute as ExecuteHook))(args);

describe('the execute stage of prepared operations, against envelop', () => {
  it('does what envelop does with any hooks, in order, sync or async, single or streamed', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(behaviour, { maxLength: 5 }), async (behaviours) => {
        expect(await outcome(behaviours, throughStage)).toEqual(await outcome(behaviours, throughEnvelop));
      }),
      { numRuns: 400 },
    );
  });

  it('answers without an engine as envelop does', async () => {
    const none = await outcome([], throughStage);
    expect(none).toEqual(await outcome([], throughEnvelop));
    expect(none).toMatchObject({ result: { threw: expect.stringContaining('useEngine') } });
  });

  it('refuses a context extension that is not an object as envelop does', async () => {
    const extendingWith = (extension: unknown): Plugin[] => [
      { onExecute: ({ extendContext }) => extendContext(extension as never) },
    ];
    for (const extension of ['text', 7, undefined]) {
      const run = (execute: typeof throughStage) =>
        execute(extendingWith(extension), { schema: {} as never, document: parse('{ a }') });
      const refusal = (execute: typeof throughStage) =>
        Promise.resolve()
          .then(() => run(execute))
          .then(
            () => 'executed',
            (error: Error) => error.message,
          );
      expect(await refusal(throughStage)).toBe(await refusal(throughEnvelop));
      expect(await refusal(throughStage)).toMatch(/Invalid context extension/);
    }
  });

  it('is not used when a plugin brings envelop instrumentation, which wraps execute whole', () => {
    const collect = (plugins: Plugin[]) => {
      const hooks = executeHooks();
      envelop({ plugins: [...plugins, hooks.plugin] as never[] });
      // Yoga calls onYogaInit once every plugin is initialised; envelop alone does not.
      (hooks.plugin.onYogaInit as () => void)();
      return hooks.stage();
    };
    expect(collect([{ onExecute: () => undefined }])).toBeTypeOf('function');
    expect(collect([{ onExecute: () => undefined, instrumentation: { execute: (_p, run) => run() } }])).toBe(undefined);
    expect(() => executeHooks().stage()).toThrow(/not initialised/);
  });
});
