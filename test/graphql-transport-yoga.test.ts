/**
 * The GraphQL transport repeats parts of Yoga (src/graphql/transport/README.md), and execution/
 * borrows from graphql-js, graphql-jit and promise-helpers (src/graphql/execution/README.md). These tests fail
 * when an upgrade changes what it was checked against: the installed versions of graphql-yoga,
 * the two packages whose behaviour it mirrors with it, and graphql-ws (whose `ws` adapter
 * src/graphql/transport/graphql-ws-server.ts repeats), and the way the result-process hooks are
 * collected through envelop's public plugin list.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createSchema, createYoga, type Plugin, processRegularResult } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { type ResultProcessHook, resultProcessHooks } from '../src/graphql/transport/result-process-hooks.js';

const README = new URL('../src/graphql/transport/README.md', import.meta.url);
const EXECUTION_README = new URL('../src/graphql/execution/README.md', import.meta.url);

/** The versions table under `heading` of a README: package → version. */
function versionsRecorded(readme: URL = README, heading = '## Versions mirrored'): Map<string, string> {
  const text = readFileSync(readme, 'utf8');
  const start = text.indexOf(heading);
  if (start < 0) throw new Error(`${readme.pathname} has no heading ${heading}`);
  const section = text.slice(start + heading.length);
  const next = section.search(/\n#{2,3} /);
  const rows = section
    .slice(0, next < 0 ? undefined : next)
    .matchAll(/^\|\s*(@?[\w./-]+)\s*\|\s*(\d+\.\d+\.\d+\S*)\s*\|$/gm);
  return new Map(Array.from(rows, (row) => [row[1] as string, row[2] as string]));
}

/** The installed version of a package, resolved as graphql-yoga resolves it. */
function installedVersion(name: string): string {
  const fromYoga = createRequire(createRequire(import.meta.url).resolve('graphql-yoga/package.json'));
  const path = name === 'graphql-yoga' ? 'graphql-yoga/package.json' : `${name}/package.json`;
  return (JSON.parse(readFileSync(fromYoga.resolve(path), 'utf8')) as { version: string }).version;
}

describe('the versions src/graphql/transport/README.md records', () => {
  const recorded = versionsRecorded();

  it('lists graphql-yoga, the packages its transport behaviour comes from, graphql-ws and the persisted-operations plugin', () => {
    expect([...recorded.keys()].sort()).toEqual([
      '@envelop/core',
      '@graphql-yoga/plugin-persisted-operations',
      '@whatwg-node/server',
      'graphql-ws',
      'graphql-yoga',
    ]);
  });

  it.each([...recorded])('%s: the installed version is the one recorded (%s)', (name, version) => {
    expect(
      installedVersion(name),
      `${name} is not the version src/graphql/transport/README.md was checked against: recheck each piece listed there`,
    ).toBe(version);
  });
});

/** The installed version of a package, as the service itself resolves it. */
function versionForService(name: string): string {
  const fromService = createRequire(import.meta.url);
  return (JSON.parse(readFileSync(fromService.resolve(`${name}/package.json`), 'utf8')) as { version: string }).version;
}

describe('the versions src/graphql/execution/README.md records for what execution/ borrows', () => {
  const recorded = versionsRecorded(EXECUTION_README, '### Versions relied on');

  it('lists graphql, graphql-jit, its envelop plugin and promise-helpers', () => {
    expect([...recorded.keys()].sort()).toEqual([
      '@envelop/graphql-jit',
      '@whatwg-node/promise-helpers',
      'graphql',
      'graphql-jit',
    ]);
  });

  it.each([...recorded])('%s: the installed version is the one recorded (%s)', (name, version) => {
    // promise-helpers is what Yoga and envelop load (package.json overrides it for them).
    const installed = name === '@whatwg-node/promise-helpers' ? installedVersion(name) : versionForService(name);
    expect(
      installed,
      `${name} is not the version src/graphql/execution/README.md was checked against: recheck each piece listed there`,
    ).toBe(version);
  });

  it('patches promise-helpers at the version recorded', () => {
    const patches = readdirSync(new URL('../patches/', import.meta.url)).filter((file) =>
      file.startsWith('@whatwg-node+promise-helpers+'),
    );
    expect(patches).toEqual([`@whatwg-node+promise-helpers+${recorded.get('@whatwg-node/promise-helpers')}.patch`]);
  });
});

describe('the result-process hooks, read from envelop’s public plugin list', () => {
  const schema = createSchema({ typeDefs: 'type Query { ok: Boolean }' });
  const hook = (): ResultProcessHook => () => undefined;

  it('are Yoga’s own processors first, then every plugin’s in Yoga’s order, added and later ones included', () => {
    const [a, b, c, d] = [hook(), hook(), hook(), hook()];
    const adding: Plugin = {
      onPluginInit({ addPlugin }) {
        addPlugin({ onResultProcess: b } as Plugin);
      },
    };
    const hooks = resultProcessHooks();
    createYoga({
      schema,
      plugins: [{ onResultProcess: a }, adding, { onResultProcess: c }, hooks.plugin, { onResultProcess: d }],
    });
    const { hooks: list, jsonChoice } = hooks.list();
    expect(list.slice(1)).toEqual([a, b, c, d]);
    // Yoga's own hook is the one the transport stands in for on one result.
    expect(jsonChoice).toBe(list[0]);
  });

  it('do not take a plugin’s hook that chooses another processor for Yoga’s', () => {
    const hooks = resultProcessHooks();
    const picky: ResultProcessHook = ({ setResultProcessor }) =>
      setResultProcessor(() => new Response('{}'), 'application/json');
    createYoga({ schema, plugins: [hooks.plugin, { onResultProcess: picky }] });
    const { hooks: list, jsonChoice } = hooks.list();
    expect(list[1]).toBe(picky);
    expect(jsonChoice).toBe(list[0]);
  });

  it('starts with Yoga’s JSON processor for a client that accepts JSON', async () => {
    const hooks = resultProcessHooks();
    createYoga({ schema, plugins: [hooks.plugin] });
    const [own] = hooks.list().hooks;
    const chosen: Array<[unknown, string]> = [];
    await own?.({
      request: new Request('http://localhost/graphql', { headers: { accept: 'application/json' } }),
      acceptableMediaTypes: [],
      result: { data: { ok: true } },
      setResult: () => undefined,
      resultProcessor: undefined,
      setResultProcessor: (processor, mediaType) => chosen.push([processor, mediaType]),
      serverContext: { waitUntil: () => undefined },
    });
    expect(chosen).toEqual([[processRegularResult, 'application/json']]);
  });

  it('start even when a plugin’s hook needs more of a request than the question gives', () => {
    const hooks = resultProcessHooks();
    const strict: ResultProcessHook = ({ request }) => {
      if (!new URL(request.url).pathname) throw new Error('unreachable');
    };
    createYoga({ schema, plugins: [hooks.plugin, { onResultProcess: strict }] });
    const { hooks: list, jsonChoice } = hooks.list();
    expect(list[1]).toBe(strict);
    expect(jsonChoice).toBe(list[0]);
  });

  it('are known once createYoga has returned', () => {
    const hooks = resultProcessHooks();
    expect(() => hooks.list()).toThrow(/not initialised/);
    createYoga({ schema, plugins: [hooks.plugin] });
    expect(hooks.list().hooks).toHaveLength(1);
  });
});
