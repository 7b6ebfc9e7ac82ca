/**
 * The `onResultProcess` hooks of every plugin Yoga runs, in Yoga's order: its own result
 * processors (JSON, server-sent events, multipart), which Yoga makes itself and does not export,
 * then the service's (HTTP caching, refused streams). ./over-http.ts runs them to write a result
 * as Yoga's `processResult` does.
 *
 * They are read from envelop's public `onPluginInit` payload, whose `plugins` is "a list of all
 * currently active plugins": the list Yoga builds its own hook list from (graphql-yoga's
 * server.ts). By the time Yoga calls `onYogaInit`, every plugin has been initialised, including
 * those Yoga adds after the service's own, so the list is complete. See ./README.md.
 */
import { type Plugin, processRegularResult } from 'graphql-yoga';

export type ResultProcessHook = NonNullable<Plugin['onResultProcess']>;

/** The hooks of a Yoga server, in Yoga's order. */
export interface ResultProcessHookList {
  readonly hooks: readonly ResultProcessHook[];
  /**
   * Yoga's own hook that chooses the processor by the request's `Accept` (use-result-processor.ts),
   * when the list has it: for one result (not a stream, not a batch) it chooses the JSON processor,
   * `processRegularResult`, with the media type ./accept.ts reads from the same header, and the
   * transport, which has read that already, sets both itself instead of having the header parsed
   * again for every request. Undefined when no hook chose it for a JSON request (after a change
   * in Yoga): every hook then runs.
   */
  readonly jsonChoice: ResultProcessHook | undefined;
}

export interface ResultProcessHooks {
  /** Goes into the plugin list given to `createYoga`. */
  readonly plugin: Plugin;
  /** The hooks, once Yoga has initialised its plugins (within `createYoga`). */
  list(): ResultProcessHookList;
}

export function resultProcessHooks(): ResultProcessHooks {
  let active: readonly unknown[] = [];
  let hooks: ResultProcessHookList | undefined;
  return {
    plugin: {
      onPluginInit({ plugins }) {
        active = plugins;
      },
      onYogaInit() {
        const list = hooksOf(active);
        hooks = { hooks: list, jsonChoice: list.find(choosesJsonProcessor) };
      },
    },
    list() {
      if (hooks === undefined) throw new Error('Yoga has not initialised its plugins: no result-process hooks yet');
      return hooks;
    },
  };
}

function hooksOf(plugins: readonly unknown[]): ResultProcessHook[] {
  const hooks: ResultProcessHook[] = [];
  for (const plugin of plugins) {
    // Yoga's list holds `false` where an option switched one of its plugins off.
    if (typeof plugin !== 'object' || plugin === null) continue;
    const { onResultProcess } = plugin as Plugin;
    if (onResultProcess) hooks.push(onResultProcess);
  }
  return hooks;
}

/**
 * Whether `hook` is the one that chooses Yoga's JSON processor: asked about a POST accepting only
 * `application/json` with one plain result, it sets `processRegularResult` and that type. Yoga's
 * choosing hook only reads the request's headers; the service's hooks act on GET or on streams.
 */
function choosesJsonProcessor(hook: ResultProcessHook): boolean {
  const request = { method: 'POST', headers: new Headers({ accept: 'application/json' }) } as unknown as Request;
  let chosen: unknown;
  let chosenType: string | undefined;
  let returned: unknown;
  try {
    returned = hook({
      request,
      result: { data: { __typename: 'Query' } },
      acceptableMediaTypes: [],
      setResult: () => undefined,
      resultProcessor: undefined,
      setResultProcessor: (processor, mediaType) => {
        chosen = processor;
        chosenType = mediaType;
      },
      serverContext: { waitUntil: () => undefined },
    });
  } catch {
    // A hook that needs more of a request than its headers is not the one.
    return false;
  }
  return returned === undefined && chosen === processRegularResult && chosenType === 'application/json';
}
