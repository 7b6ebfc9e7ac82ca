/**
 * New avatar variants are made at idle priority, so that lookups keep their latency while avatars
 * are made: the origin process (./origin-child.ts) lowers itself, every thread of it, when it
 * starts. Its threads are its event loop (the fetches, the originals' bytes, sharp's calls),
 * libuv's pool (sharp's work is queued there), V8's helpers (the collections of large
 * originals) and libvips' workers (the decoding, resizing and encoding). Threads started later
 * inherit the class and nice value of the thread that starts them, so lowering the threads there
 * are at start lowers every one there will be.
 *
 * Linux's `SCHED_IDLE` class runs a thread only on a core no other thread wants, and gives the
 * core up at once when one does. Nice 19 is set first, and is what stays where `SCHED_IDLE`
 * cannot be set: it gives the process a small share of a busy core, but on kernels whose scheduler
 * lets a running thread finish its time slice before a waking one of higher weight (EEVDF, Linux
 * 6.6 and later) a nice-19 thread still delays the event loop's wake-ups (bench/README.md, "Spare
 * CPU, and what nice 19 is worth here"; docs/decisions.md, "Making variants at idle priority").
 * The class is set with `chrt --idle --all-tasks -p 0 <pid>` of util-linux, as Node has no call
 * for it. Elsewhere than Linux, the process alone is set to nice 19.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { constants, setPriority } from 'node:os';

/** `SCHED_IDLE` in the policy field of /proc/<id>/stat. */
const SCHED_IDLE = 5;

/** Lowers every thread of the calling process: nice 19, then the idle class where `chrt` can set it. */
export function lowerThisProcess(): void {
  if (process.platform !== 'linux') {
    setNice(0);
    return;
  }
  for (const task of tasksOf(process.pid)) setNice(Number(task));
  try {
    execFileSync('chrt', ['--idle', '--all-tasks', '--pid', '0', String(process.pid)], { stdio: 'ignore' });
  } catch {
    // No chrt (a minimal image), or the class refused: nice 19 it is.
  }
}

function setNice(task: number): void {
  try {
    setPriority(task, constants.priority.PRIORITY_LOW);
  } catch {
    // The thread ended meanwhile, or the system refuses: it keeps its priority.
  }
}

function tasksOf(pid: number): string[] {
  try {
    return readdirSync(`/proc/${pid}/task`);
  } catch {
    return []; // no /proc, or the process ended
  }
}

export interface ThreadPriority {
  name: string;
  nice: number;
  idleClass: boolean;
}

/** The name, nice value and scheduling class of each thread of process `pid` (Linux; empty elsewhere). */
export function threadPriorities(pid: number): ThreadPriority[] {
  const threads: ThreadPriority[] = [];
  for (const task of tasksOf(pid)) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8');
    } catch {
      continue; // ended meanwhile
    }
    // The name (field 2) is in parentheses and may hold spaces: fields are counted after ')'.
    // Field 19 is the nice value, field 41 the policy.
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    threads.push({ name, nice: Number(fields[16]), idleClass: Number(fields[38]) === SCHED_IDLE });
  }
  return threads;
}
