// Saves the service's OpenAPI document as openapi.json, the input of openapi-typescript.
// SERVICE_URL names the service (default http://127.0.0.1:4000). The `servers` entry is left
// out: it is where one deployment is (PUBLIC_URL), which this app sets itself.
import { writeFile } from 'node:fs/promises';

const service = process.env.SERVICE_URL ?? 'http://127.0.0.1:4000';
const response = await fetch(new URL('/api/openapi.json', service));
if (!response.ok) throw new Error(`${service}/api/openapi.json answered ${response.status}`);
const { servers: _servers, ...document } = await response.json();
await writeFile(new URL('../openapi.json', import.meta.url), `${JSON.stringify(document, null, 2)}\n`);
console.log(`openapi.json: the OpenAPI document of ${service}`);
