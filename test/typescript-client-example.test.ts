/**
 * examples/typescript-client as its README tells a developer to use it: its dependencies
 * installed (`npm ci` in its folder, when absent), its typed documents, manifest and REST types
 * generated from a started service and the repository's schema (the same files as committed),
 * type-checked, built, and run against a service process that loads its persisted-documents
 * manifest (PERSISTED_DOCUMENTS) with a documents-only API key: a lookup, a batch and an owner
 * check over REST and over GraphQL by document id, and a live event over SSE by document id.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importLines } from '../src/data/importer.js';
import { seedDemoData } from '../src/data/seed.js';
import { runCli } from './support/cli.js';
import { ndjson } from './support/data-files.js';
import { createTestDatabase, type TestDatabase } from './support/databases.js';
import { eventually } from './support/eventually.js';
import { readMetrics } from './support/metrics.js';
import { PROJECT_ROOT, type ServerProcess, startServerProcess } from './support/server-process.js';

const EXAMPLE = path.join(PROJECT_ROOT, 'examples/typescript-client');
const MANIFEST = path.join(EXAMPLE, 'src/generated/graphql/persisted-documents.json');
/** What `npm run generate` writes, compared with the committed files. */
const GENERATED = [
  'openapi.json',
  'src/generated/rest.ts',
  'src/generated/inputs.json',
  'src/generated/graphql/graphql.ts',
  'src/generated/graphql/gql.ts',
  'src/generated/graphql/persisted-documents.json',
];
const INSTALL_TIMEOUT_MS = 400_000;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `command` in the example's folder and collects its output. */
function runInExample(command: string, args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: EXAMPLE, env: { ...process.env, ...env }, stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function expectSuccess(run: Run, what: string): void {
  expect(run.code, `${what}:\n${run.stdout}\n${run.stderr}`).toBe(0);
}

const readGenerated = () => GENERATED.map((file) => readFileSync(path.join(EXAMPLE, file), 'utf8'));

describe.skipIf(process.env.TEST_DATABASE_URL === undefined)('examples/typescript-client against a service', () => {
  let testDb: TestDatabase;
  let service: ServerProcess;
  let example: ChildProcess | undefined;

  beforeAll(async () => {
    if (!existsSync(path.join(EXAMPLE, 'node_modules'))) {
      // From the lock file; npm's cache answers when it has the packages.
      expectSuccess(await runInExample('npm', ['ci', '--no-audit', '--no-fund', '--prefer-offline']), 'npm ci');
    }
    testDb = await createTestDatabase('postgres');
    const handle = await testDb.open();
    await seedDemoData(handle.db);
    await handle.close();
    service = await startServerProcess({
      env: { ...testDb.env, PERSISTED_DOCUMENTS: MANIFEST },
      startTimeoutMs: 180_000,
    });
  }, INSTALL_TIMEOUT_MS);
  afterAll(async () => {
    example?.kill();
    await service?.stop();
    await testDb?.drop();
  });

  let key: Promise<string> | undefined;
  /** A documents-only key made as an operator would (`npm run keys -- create --documents-only`). */
  const documentsOnlyKey = () => {
    key ??= runCli('keys', ['create', '--name', 'TypeScript example', '--documents-only'], { env: testDb.env }).then(
      (created) => {
        expect(created.code, created.stderr).toBe(0);
        return created.stdout.trim();
      },
    );
    return key;
  };

  it('generates the committed files from the service and the schema', async () => {
    const committed = readGenerated();
    expectSuccess(await runInExample('npm', ['run', 'generate'], { SERVICE_URL: service.url }), 'npm run generate');
    const generated = readGenerated();
    GENERATED.forEach((file, index) => {
      expect(generated[index], `${file} differs from the committed one`).toBe(committed[index]);
    });
  }, 120_000);

  it('type-checks and builds', async () => {
    expectSuccess(await runInExample('npm', ['run', 'typecheck']), 'npm run typecheck');
    expectSuccess(await runInExample('npm', ['run', 'build']), 'npm run build');
  }, 120_000);

  it('the key runs only persisted documents', async () => {
    const apiKey = await documentsOnlyKey();
    const response = await fetch(`${service.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
      body: JSON.stringify({ query: '{ profile(name: "demo@me") { name } }' }),
    });
    expect(response.status).toBe(400);
    const answer = (await response.json()) as { errors: Array<{ message: string; extensions: { code: string } }> };
    expect(answer.errors[0]).toMatchObject({
      message: 'This API key may run only persisted documents',
      extensions: { code: 'PERSISTED_DOCUMENTS_ONLY' },
    });
  });

  it('runs: REST and GraphQL by document id with a documents-only key, and a live event', async () => {
    const apiKey = await documentsOnlyKey();
    const child = spawn(process.execPath, ['dist/main.js'], {
      cwd: EXAMPLE,
      env: { ...process.env, SERVICE_URL: service.url, API_KEY: apiKey, EXAMPLE_EVENTS: '1' },
      stdio: 'pipe',
    });
    example = child;
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.once('close', resolve));

    await eventually(
      async () =>
        child.exitCode !== null ||
        (await readMetrics(service.url)).value('live_subscriptions', { transport: 'sse' }) === 1,
      { what: 'the example subscribed over SSE', withinMs: 30_000 },
    );
    expect(child.exitCode, `${stdout}\n${stderr}`).toBeNull();
    const handle = await testDb.open();
    try {
      await importLines(
        handle.db,
        ndjson({ kind: 'profile', name: 'demo@me', creatorEmail: 'maker@example.com', description: 'Changed live' }),
      );
    } finally {
      await handle.close();
    }
    expect(await exited, `${stdout}\n${stderr}`).toBe(0);
    expect(stdout).toContain('REST lookup: demo@me: ');
    expect(stdout).toContain('REST batch: demo@me=found nobody@me=none');
    expect(stdout).toContain('REST owner check: maker@example.com created demo@me: true');
    expect(stdout).toContain('GraphQL lookup: demo@me');
    expect(stdout).toContain('GraphQL batch: demo@me none');
    expect(stdout).toContain('GraphQL owner check: maker@example.com created demo@me: true');
    expect(stdout).toContain('live: demo@me changed: Changed live');
  }, 120_000);
});
