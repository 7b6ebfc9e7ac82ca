/**
 * New avatar variants are made at idle priority, so that lookups keep their latency while avatars
 * are made. The threads: the origin thread (./origin-thread.ts: the fetches, the originals'
 * bytes, sharp's calls and their garbage) and libvips' workers (the decoding, resizing and
 * encoding: about 19 ms of a 2000×1500 JPEG's 22 ms). Each is put in Linux's `SCHED_IDLE` class,
 * which runs a thread only on a core no other thread wants, and gives the core up at once when
 * one does. Nice 19 is set first, at once, and is what stays where `SCHED_IDLE` cannot be set:
 * it gives those threads a small share of a busy core, but on kernels whose scheduler lets a
 * running thread finish its time slice before a waking one of higher weight (EEVDF, Linux 6.6
 * and later) a nice-19 thread still delays the event loop's wake-ups; measured in
 * bench/README.md ("Spare CPU, and what nice 19 is worth here") and docs/decisions.md
 * ("Making variants at idle priority").
 *
 * Not libuv's pool: it also does the process's file reads and DNS lookups, which keep their
 * priority. Linux only: a thread is found by name in /proc/self/task and set through its id
 * (setpriority for nice; `chrt --idle -p 0 <id>` of util-linux for the class, as Node has no
 * call for it). Elsewhere, or where /proc cannot be read, this does nothing; without `chrt`, the
 * threads stay at nice 19.
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { constants, setPriority } from 'node:os';

/** The name Linux shows for the origin thread (given when it is started). */
export const ORIGIN_THREAD_NAME = 'avatar-origins';
/** The threads lowered: the origin thread and libvips' workers. */
const LOWERED_THREAD_NAMES = new Set([ORIGIN_THREAD_NAME, 'libvips worker']);
const TASKS = '/proc/self/task';
/** `SCHED_IDLE` in the policy field of /proc/<id>/stat. */
const SCHED_IDLE = 5;

/** Threads already looked at (lowered, or not one to lower). */
const seen = new Set<string>();
let unavailable = process.platform !== 'linux';
let chrtMissing = false;

/**
 * Lowers every origin thread or libvips worker not seen before. Called before each resize: libvips starts workers as it needs them (from threads of normal
 * priority), so each scan finds at most the few the last resize started.
 */
export function lowerWorkerThreadPriority(): void {
  if (unavailable) return;
  let tasks: string[];
  try {
    tasks = readdirSync(TASKS);
  } catch {
    unavailable = true;
    return;
  }
  if (tasks.length === seen.size && tasks.every((task) => seen.has(task))) return;
  for (const task of tasks) {
    if (seen.has(task)) continue;
    seen.add(task);
    if (LOWERED_THREAD_NAMES.has(threadName(task))) lower(task);
  }
  // An ended thread's id may be given to a new thread: keep only the live ones.
  const live = new Set(tasks);
  for (const task of seen) if (!live.has(task)) seen.delete(task);
}

/**
 * Names the calling thread `name` and lowers it: the origin thread does so when it starts. Node 24
 * gives a worker thread its name in the system already; Node 22 shows every thread as `node`, so
 * the thread writes its own (`/proc/thread-self` is the calling thread; a thread may rename itself).
 */
export function nameAndLowerThisThread(name: string): void {
  if (unavailable) return;
  let task: string | undefined;
  try {
    task = readlinkSync('/proc/thread-self').split('/').at(-1);
    writeFileSync('/proc/thread-self/comm', name.slice(0, 15));
  } catch {
    // No /proc, or the name refused: the thread is lowered all the same when its id is known.
  }
  if (task === undefined || !/^\d+$/.test(task)) return;
  seen.add(task);
  lower(task);
}

function threadName(task: string): string {
  try {
    return readFileSync(`${TASKS}/${task}/comm`, 'utf8').trim();
  } catch {
    return ''; // the thread ended meanwhile
  }
}

function lower(task: string): void {
  try {
    setPriority(Number(task), constants.priority.PRIORITY_LOW);
  } catch {
    // The thread ended meanwhile, or the system refuses: it keeps its priority.
  }
  if (chrtMissing) return;
  execFile('chrt', ['--idle', '-p', '0', task], (error) => {
    // Not installed: nice 19 it is, for every thread from now on. Any other failure (the thread
    // ended meanwhile) concerns that thread alone.
    if ((error as NodeJS.ErrnoException | null)?.code === 'ENOENT') chrtMissing = true;
  });
}

/** The nice value and scheduling class of each lowered thread of the process (Linux; empty elsewhere). */
export function workerThreadPriorities(): { name: string; nice: number; idleClass: boolean }[] {
  if (process.platform !== 'linux') return [];
  const threads: { name: string; nice: number; idleClass: boolean }[] = [];
  for (const task of readdirSync(TASKS)) {
    const name = threadName(task);
    if (!LOWERED_THREAD_NAMES.has(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`${TASKS}/${task}/stat`, 'utf8');
    } catch {
      continue; // ended meanwhile
    }
    // Field 19 of stat is the nice value, field 41 the policy; the name (field 2) may hold
    // spaces, so count after ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    threads.push({ name, nice: Number(fields[16]), idleClass: Number(fields[38]) === SCHED_IDLE });
  }
  return threads;
}
