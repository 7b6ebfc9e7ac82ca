/**
 * Envelop's execute stage for prepared operations (./prepared-operations.ts): every plugin's
 * `onExecute` hook, the execute function they chose, then every `onExecuteDone` hook, in the
 * order and with the effects of envelop's own `customExecute` (`@envelop/core`, orchestrator.js),
 * but without its per-request machinery: envelop makes a payload with three closures for each
 * hook and chains every hook through promise helpers. Here one payload serves all the hooks of
 * a stage (brought up to date before each, as the result hooks' payload of
 * ../transport/over-http.ts is), and only hooks that return a promise are awaited: envelop's
 * payloads and promise chains were a large part of what a prepared request allocated
 * (docs/decisions.md, "Prepared operations"). The context is still built by envelop (`getEnveloped(context).contextFactory()`):
 * its context error handlers, which plugins register inside envelop, are not visible outside.
 *
 * The hooks are read from envelop's `onPluginInit` payload when Yoga has initialised its plugins,
 * as ../transport/result-process-hooks.ts reads the result hooks. When a plugin brings envelop
 * `instrumentation` (which wraps execute as a whole), there is no stage here, and prepared
 * operations execute through envelop itself. ../transport/README.md lists this as a piece that
 * mirrors envelop; test/graphql-execute-hooks.test.ts runs the same plugins through both and
 * compares what they did.
 */
import type { ExecutionArgs, ExecutionResult } from 'graphql';
// `isPromise`: anything with a `then`, as envelop tests what a hook returned.
import { finalAsyncIterator, isAsyncIterable, isPromise, mapAsyncIterator, type Plugin } from 'graphql-yoga';

type ExecuteHook = NonNullable<Plugin['onExecute']>;
type ExecutePayload = Parameters<ExecuteHook>[0];
type ExecuteHookResult = Exclude<Awaited<ReturnType<ExecuteHook>>, void>;
type DoneHook = NonNullable<ExecuteHookResult['onExecuteDone']>;
type DonePayload = Parameters<DoneHook>[0];
type DoneHookResult = Exclude<Awaited<ReturnType<DoneHook>>, void>;
type ExecuteFunction = ExecutePayload['executeFn'];
type Executed = DonePayload['result'];

/** What a stage gives for one execution: the result, or a promise of it. */
export type ExecuteStage = (args: ExecutionArgs) => Executed | Promise<Executed>;

export interface ExecuteHooks {
  /** Goes into the plugin list given to `createYoga`. */
  readonly plugin: Plugin;
  /** The stage, once Yoga has initialised its plugins; undefined when envelop must run it itself. */
  stage(): ExecuteStage | undefined;
}

export function executeHooks(): ExecuteHooks {
  let active: readonly unknown[] = [];
  let stage: ExecuteStage | undefined;
  let initialised = false;
  return {
    plugin: {
      onPluginInit({ plugins }) {
        active = plugins;
      },
      onYogaInit() {
        initialised = true;
        const plugins = active.filter((plugin): plugin is Plugin => typeof plugin === 'object' && plugin !== null);
        // Envelop wraps its execute in the instrumentation's; a stage of its own would skip it.
        if (plugins.some((plugin) => plugin.instrumentation !== undefined)) return;
        const hooks = plugins.flatMap((plugin) => (plugin.onExecute === undefined ? [] : [plugin.onExecute]));
        stage = executeStage(hooks);
      },
    },
    stage() {
      if (!initialised) throw new Error('Yoga has not initialised its plugins: no execute hooks yet');
      return stage;
    },
  };
}

/** Envelop's `execute` before a plugin has set one (its `throwEngineFunctionError`). */
const noEngine: ExecuteFunction = () => {
  throw new Error('No `execute` function found! Register it using "useEngine" plugin.');
};

/** The execute stage over `hooks`, in plugin order (exported for the tests). */
export function executeStage(hooks: readonly ExecuteHook[]): ExecuteStage {
  return (args) => {
    const context = (args.contextValue ?? {}) as ExecutePayload['context'];
    let executeFn = noEngine;
    let stopped: ExecutionResult | undefined;
    let ended = false;
    const afterCalls: ExecuteHookResult[] = [];
    const payload: ExecutePayload = {
      executeFn: noEngine,
      setExecuteFn: (next) => {
        executeFn = next;
      },
      setResultAndStopExecution: (result) => {
        stopped = result;
        ended = true;
      },
      context,
      extendContext: (extension) => {
        if (typeof extension !== 'object') {
          throw new Error(
            `Invalid context extension provided! Expected "object", got: "${JSON.stringify(extension)}" (${typeof extension})`,
          );
        }
        Object.assign(context, extension);
      },
      args: args as ExecutePayload['args'],
    };
    const runFrom = (index: number): Executed | Promise<Executed> => {
      for (let i = index; i < hooks.length && !ended; i += 1) {
        // As envelop's payload for each hook: the execute function chosen before it.
        payload.executeFn = executeFn;
        const returned = (hooks[i] as ExecuteHook)(payload);
        if (isPromise(returned)) {
          return Promise.resolve(returned).then((after) => {
            if (after) afterCalls.push(after);
            return runFrom(i + 1);
          });
        }
        if (returned) afterCalls.push(returned);
      }
      const executed = stopped || executeFn({ ...args, contextValue: context });
      return isPromise(executed)
        ? Promise.resolve(executed).then((result) => whenDone(afterCalls, args, result as Executed))
        : whenDone(afterCalls, args, executed as Executed);
    };
    return runFrom(0);
  };
}

/** The `onExecuteDone` hooks, then the `onNext` and `onEnd` hooks they gave, on a streamed result. */
function whenDone(
  afterCalls: readonly ExecuteHookResult[],
  args: ExecutionArgs,
  executed: Executed,
): Executed | Promise<Executed> {
  const doneResults: DoneHookResult[] = [];
  const payload: DonePayload = {
    args: args as DonePayload['args'],
    result: executed,
    setResult: (next) => {
      payload.result = next;
    },
  };
  const runFrom = (index: number): Executed | Promise<Executed> => {
    for (let i = index; i < afterCalls.length; i += 1) {
      const onDone = (afterCalls[i] as ExecuteHookResult).onExecuteDone;
      if (onDone === undefined) continue;
      const returned = onDone(payload);
      if (isPromise(returned)) {
        return Promise.resolve(returned).then((done) => {
          if (done) doneResults.push(done);
          return runFrom(i + 1);
        });
      }
      if (returned) doneResults.push(returned);
    }
    return streamed(payload.result, doneResults, args);
  };
  return runFrom(0);
}

/** As envelop maps a streamed result: every `onNext` on each value, every `onEnd` at its end. */
function streamed(result: Executed, doneResults: readonly DoneHookResult[], args: ExecutionArgs): Executed {
  if (!isAsyncIterable(result)) return result;
  const onNexts = doneResults.flatMap(({ onNext }) => (onNext === undefined ? [] : [onNext]));
  const onEnds = doneResults.flatMap(({ onEnd }) => (onEnd === undefined ? [] : [onEnd]));
  let stream = result;
  if (onNexts.length > 0) {
    stream = mapAsyncIterator(stream, async (value: ExecutionResult) => {
      let current = value;
      const setResult = (next: ExecutionResult) => {
        current = next;
      };
      for (const onNext of onNexts) {
        await onNext({ args: args as DonePayload['args'], result: current, setResult });
      }
      return current;
    }) as typeof stream;
  }
  if (onEnds.length > 0) {
    stream = finalAsyncIterator(stream, () => {
      for (const onEnd of onEnds) onEnd();
    }) as typeof stream;
  }
  return stream;
}
