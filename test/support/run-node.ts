/**
 * Runs an ES module script in a child Node process with flags of the test's choosing (a small
 * heap, say), from the project root, and collects its output: what a process limit decides is
 * tested in a process of its own, never in the runner.
 */
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';

export const PROJECT_ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface NodeResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runNode(flags: readonly string[], script: string): Promise<NodeResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...flags, '--input-type=module', '--eval', script], {
      cwd: PROJECT_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const output = collectOutput(child);
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, ...output }));
  });
}

/** What a child with piped stdout and stderr has written so far, as text; grows as it writes. */
export function collectOutput(child: ChildProcessByStdio<null, Readable, Readable>): {
  readonly stdout: string;
  readonly stderr: string;
} {
  const output = { stdout: '', stderr: '' };
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    output.stdout += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    output.stderr += chunk;
  });
  return output;
}
