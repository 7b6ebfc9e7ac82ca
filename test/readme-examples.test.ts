/**
 * The README's examples run as written: every `curl` command of its `sh` blocks is run against a
 * live server with the demo data (only the base URL is replaced by the test server's), and must
 * succeed with an answer that is not an error.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { useDemoServer } from './support/app-server.js';

const README = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const BASE_URL = 'http://127.0.0.1:4000';

/** The curl commands of the README's `sh` blocks, continuation lines joined. */
function curlCommands(markdown: string): string[] {
  const blocks = [...markdown.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');
  const commands: string[] = [];
  for (const block of blocks) {
    const lines = block.replace(/\\\n\s*/g, ' ').split('\n');
    for (const line of lines) if (line.trim().startsWith('curl ')) commands.push(line.trim());
  }
  return commands;
}

const COMMANDS = curlCommands(README);

describe('the README', () => {
  const demo = useDemoServer({ PROFILE_LIMIT: '0' });

  it('has curl examples for REST, GraphQL and the other paths', () => {
    expect(COMMANDS.length).toBeGreaterThanOrEqual(8);
    expect(COMMANDS.some((command) => command.includes('/graphql'))).toBe(true);
    expect(COMMANDS.every((command) => command.includes(BASE_URL))).toBe(true);
  });

  it.each(COMMANDS)('runs %s', async (command) => {
    const { stdout } = await promisify(execFile)('sh', ['-c', command.replaceAll(BASE_URL, demo.server.url)]);
    expect(stdout.length).toBeGreaterThan(0);
    const text = stdout.trim();
    if (text.startsWith('{')) {
      const body = JSON.parse(text) as { error?: unknown; errors?: unknown; data?: unknown };
      expect(body.error).toBeUndefined();
      expect(body.errors).toBeUndefined();
    } else if (/^\d{3} /.test(text)) {
      expect(Number(text.slice(0, 3))).toBeLessThan(400);
    }
  });
});
