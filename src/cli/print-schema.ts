/**
 * `npm run schema`: writes the GraphQL schema of the code to `schema.graphql` (or to the path
 * given as the first argument). The file is committed; a test fails when it differs from the code.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { schemaSdl } from '../graphql/schema.js';

export const SCHEMA_FILE = fileURLToPath(new URL('../../schema.graphql', import.meta.url));

const target = process.argv[2] === undefined ? SCHEMA_FILE : path.resolve(process.argv[2]);
writeFileSync(target, schemaSdl());
process.stdout.write(`wrote ${path.relative(process.cwd(), target) || target}\n`);
