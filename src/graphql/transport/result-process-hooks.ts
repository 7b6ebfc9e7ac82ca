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
import type { Plugin } from 'graphql-yoga';

export type ResultProcessHook = NonNullable<Plugin['onResultProcess']>;

export interface ResultProcessHooks {
  /** Goes into the plugin list given to `createYoga`. */
  readonly plugin: Plugin;
  /** The hooks, once Yoga has initialised its plugins (within `createYoga`). */
  list(): readonly ResultProcessHook[];
}

export function resultProcessHooks(): ResultProcessHooks {
  let active: readonly unknown[] = [];
  let hooks: readonly ResultProcessHook[] | undefined;
  return {
    plugin: {
      onPluginInit({ plugins }) {
        active = plugins;
      },
      onYogaInit() {
        hooks = hooksOf(active);
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
