/**
 * examples/typescript-client's generated files are made from the repository's schema.graphql and
 * the service's OpenAPI document (its copy, openapi.json). When either changes, this fails until
 * `npm run generate` has been run in that folder and the result committed (its README says how).
 * test/typescript-client-example.test.ts builds and runs the example against a service.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useDemoServer } from './support/app-server.js';
import { PROJECT_ROOT } from './support/server-process.js';

const EXAMPLE = path.join(PROJECT_ROOT, 'examples/typescript-client');
const REGENERATE = 'regenerate: `cd examples/typescript-client && npm run generate` with the service running';

const read = (file: string) => readFileSync(path.join(EXAMPLE, file), 'utf8');
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('examples/typescript-client: generated files', () => {
  const demo = useDemoServer();
  const inputs = JSON.parse(read('src/generated/inputs.json')) as { schema: string; openapi: string };

  it('were made from the current schema.graphql', () => {
    const schema = readFileSync(path.join(PROJECT_ROOT, 'schema.graphql'), 'utf8');
    expect(inputs.schema, `schema.graphql changed; ${REGENERATE}`).toBe(sha256(schema));
  });

  it('were made from the current OpenAPI document', async () => {
    const served = (await (await fetch(`${demo.server.url}/api/openapi.json`)).json()) as Record<string, unknown>;
    // As scripts/fetch-openapi.mjs saves it: without the deployment's `servers`.
    const { servers: _servers, ...document } = served;
    const current = `${JSON.stringify(document, null, 2)}\n`;
    expect(read('openapi.json') === current, `the OpenAPI document changed; ${REGENERATE}`).toBe(true);
    expect(inputs.openapi, `openapi.json changed; ${REGENERATE}`).toBe(sha256(current));
  });

  it('name each persisted document by the sha256 of its text', () => {
    const manifest = JSON.parse(read('src/generated/graphql/persisted-documents.json')) as Record<string, string>;
    const entries = Object.entries(manifest);
    expect(entries.length).toBeGreaterThanOrEqual(4);
    for (const [id, document] of entries) expect(id).toBe(`sha256:${sha256(document)}`);
  });
});
