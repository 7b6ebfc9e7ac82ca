/**
 * `npm run schema`: writes the GraphQL schema of the code to `schema.graphql` (or to the path
 * given as the first argument). The file is committed; a test fails when it differs from the code.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { schemaSdl } from '../../graphql/schema/schema.js';
import { type Command, CommandError, parseArguments, UsageError } from '../command.js';

const SCHEMA_FILE = fileURLToPath(new URL('../../../schema.graphql', import.meta.url));

const HELP = {
  usage: 'npm run schema [-- file]',
  details: `
Prints the GraphQL schema of the code (SDL, in declaration order) to schema.graphql, or to the
file given. The committed schema.graphql must match the code: a test fails when it differs.`,
};

export const printSchemaCommand: Command = {
  help: HELP,
  async main(io) {
    const { positionals } = parseArguments(io, { allowPositionals: true, strict: true });
    if (positionals.length > 1) throw new UsageError('Name at most one file to write.');
    const target = positionals[0] === undefined ? SCHEMA_FILE : path.resolve(positionals[0]);
    try {
      writeFileSync(target, schemaSdl());
    } catch (error) {
      throw new CommandError(`Cannot write ${target}: ${error instanceof Error ? error.message : String(error)}`);
    }
    io.stdout.write(`wrote ${path.relative(process.cwd(), target) || target}\n`);
    return 0;
  },
};
