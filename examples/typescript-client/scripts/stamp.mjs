// Records which inputs the generated files were made from: the sha256 of the schema and of
// openapi.json. The service's tests compare it with the repository's current schema.graphql and
// OpenAPI document, so a change there fails until `npm run generate` has been run here.
import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';

const sha256 = async (url) =>
  createHash('sha256')
    .update(await readFile(url))
    .digest('hex');
const stamp = {
  schema: await sha256(new URL('../../../schema.graphql', import.meta.url)),
  openapi: await sha256(new URL('../openapi.json', import.meta.url)),
};
await writeFile(new URL('../src/generated/inputs.json', import.meta.url), `${JSON.stringify(stamp, null, 2)}\n`);
