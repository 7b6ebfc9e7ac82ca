/**
 * A process and its descendants, read from Linux's /proc: to check that stopping a command left
 * nothing of it running, and to measure what it holds in memory. A PID alone could be reused by
 * an unrelated process, so each entry also keeps its start time.
 */
import { readFileSync } from 'node:fs';

export interface TreeProcess {
  pid: number;
  ppid: number;
  /** Clock ticks after boot; with the PID, it names this process and no later one. */
  startTime: string;
  command: string;
  rssKiB: number;
}

/** `pid` and every process below it, parents first; empty when `pid` is gone. */
export function processTree(pid: number): TreeProcess[] {
  const tree: TreeProcess[] = [];
  const pending = [pid];
  for (let next = pending.shift(); next !== undefined; next = pending.shift()) {
    const entry = readProcess(next);
    if (entry === undefined) continue;
    tree.push(entry);
    pending.push(...childrenOf(next));
  }
  return tree;
}

/** Whether that very process (same PID and start time) still exists and is not a zombie. */
export function isStillRunning(entry: TreeProcess): boolean {
  const now = readProcess(entry.pid);
  return now !== undefined && now.startTime === entry.startTime;
}

/** Clock ticks a second in /proc/<pid>/stat (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** CPU seconds (user + system) `pid` has used so far; undefined when it is gone. */
export function cpuSecondsOf(pid: number): number | undefined {
  try {
    const fields = statFields(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/** CPU seconds used so far by `pid` and every process below it. */
export function treeCpuSeconds(pid: number): number {
  return processTree(pid).reduce((sum, entry) => sum + (cpuSecondsOf(entry.pid) ?? 0), 0);
}

/** The fields of /proc/<pid>/stat after the command name, which may hold spaces and parentheses. */
function statFields(stat: string): string[] {
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

export function describeTree(tree: readonly TreeProcess[]): string {
  return tree.map((p) => `${p.pid} (parent ${p.ppid}, ${Math.round(p.rssKiB / 1024)} MB): ${p.command}`).join('\n');
}

function childrenOf(pid: number): number[] {
  try {
    // The children of the main thread; Node and the shells here start processes from it.
    const text = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8');
    return text.split(' ').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

function readProcess(pid: number): TreeProcess | undefined {
  let stat: string;
  let status: string;
  let command: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
    command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return undefined;
  }
  const fields = statFields(stat);
  const [state, ppid] = fields;
  if (state === 'Z' || state === 'X') return undefined;
  return {
    pid,
    ppid: Number(ppid),
    startTime: fields[19] ?? '',
    command,
    rssKiB: Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0),
  };
}
