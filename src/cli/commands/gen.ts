/**
 * `npm run gen -- --profiles N [--seed S] [--namespaces K] [--out file]`: synthetic NDJSON data
 * for tests, load tests and benchmarks. The same options always give the same bytes. Without
 * --out it writes to standard output (use `npm run -s gen` so npm's banner stays out of it).
 */
import { createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DEFAULT_NAMESPACES, type GeneratorOptions, generateNdjson } from '../../data/generator.js';
import {
  type Command,
  CommandError,
  type CommandIo,
  formatCount,
  parseArguments,
  UsageError,
  wholeNumber,
} from '../command.js';

const HELP = {
  usage: `npm run gen -- --profiles N [--seed S (default 1)] [--namespaces K (default ${DEFAULT_NAMESPACES})] [--out file]`,
  details: `
Writes synthetic data in the import format: K namespaces, then N profiles. The same options give
the same bytes on any machine; memory stays flat for any N. Without --out it writes to standard
output (use npm run -s, so npm's banner stays out of the data).

Examples:
  npm run -s gen -- --profiles 1000 > small.ndjson
  npm run -s gen -- --profiles 1000000 --seed 1 --out 1m.ndjson`,
};

export const genCommand: Command = { help: HELP, main: generate };

async function generate(io: CommandIo): Promise<undefined> {
  const { options, out } = readArguments(io);
  const source = Readable.from(generateNdjson(options));
  if (out === undefined) {
    // A reader that stops early (| head) ends the command quietly: see executeCommand.
    await pipeline(source, io.stdout, { end: false });
  } else {
    try {
      await pipeline(source, createWriteStream(out));
    } catch (error) {
      if (error instanceof Error && 'syscall' in error) throw new CommandError(`Cannot write ${out}: ${error.message}`);
      throw error;
    }
  }
  if (out !== undefined) {
    io.stderr.write(
      `Wrote ${formatCount(options.namespaces ?? DEFAULT_NAMESPACES)} namespaces and ${formatCount(options.profiles)} profiles to ${out}.\n`,
    );
  }
}

function readArguments(io: CommandIo): { options: GeneratorOptions; out: string | undefined } {
  const { values } = parseArguments(io, {
    options: {
      profiles: { type: 'string' },
      seed: { type: 'string', default: '1' },
      namespaces: { type: 'string', default: String(DEFAULT_NAMESPACES) },
      out: { type: 'string' },
    },
    strict: true,
  });
  if (values.profiles === undefined) throw new UsageError('--profiles is required.');
  return {
    options: {
      profiles: wholeNumber('--profiles', values.profiles, 0, 1_000_000_000),
      seed: wholeNumber('--seed', values.seed, 0, 4_294_967_295),
      namespaces: wholeNumber('--namespaces', values.namespaces, 1, 1_000_000),
    },
    out: values.out,
  };
}
