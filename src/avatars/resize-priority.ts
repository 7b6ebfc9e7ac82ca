/**
 * Resizing runs at the lowest CPU priority, so that lookups keep their latency while avatars are
 * resized. sharp's decoding, resizing and encoding run on libvips' worker threads (about 19 ms of
 * a 2000×1500 JPEG's 22 ms; the rest on libuv's pool thread that starts the call and on the event
 * loop), never on the event loop; but on a machine whose cores are busy, a resize takes its time
 * slices from the event loop as much as from anything else. At nice 19 the kernel gives those
 * threads little of a core that a nice-0 thread of the process also wants, and all of an idle
 * one (docs/decisions.md, "Resizing at the lowest priority").
 *
 * Only libvips' workers: libuv's pool also does the process's file reads and DNS lookups, which
 * keep their priority. Linux only: a thread's nice value is set through its id (setpriority on a
 * thread id), and the threads are found by name in /proc/self/task. Elsewhere, or where /proc
 * cannot be read, this does nothing.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { constants, setPriority } from 'node:os';

/** The name Linux shows for libvips' worker threads. */
const WORKER_THREAD_NAMES = new Set(['libvips worker']);
const TASKS = '/proc/self/task';

/** Threads already looked at (lowered, or not a worker). */
const seen = new Set<string>();
let unavailable = process.platform !== 'linux';

/**
 * Lowers every libvips worker not seen before to the lowest priority. Called before each resize:
 * libvips starts workers as it needs them (from threads of normal priority), so each scan finds
 * at most the few the last resize started.
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
    if (WORKER_THREAD_NAMES.has(threadName(task))) lower(Number(task));
  }
  // An ended thread's id may be given to a new thread: keep only the live ones.
  const live = new Set(tasks);
  for (const task of seen) if (!live.has(task)) seen.delete(task);
}

function threadName(task: string): string {
  try {
    return readFileSync(`${TASKS}/${task}/comm`, 'utf8').trim();
  } catch {
    return ''; // the thread ended meanwhile
  }
}

function lower(threadId: number): void {
  try {
    setPriority(threadId, constants.priority.PRIORITY_LOW);
  } catch {
    // The thread ended meanwhile, or the system refuses: it keeps its priority.
  }
}

/** The nice value of each worker thread of the process (Linux; empty elsewhere). */
export function workerThreadPriorities(): { name: string; nice: number }[] {
  if (process.platform !== 'linux') return [];
  const threads: { name: string; nice: number }[] = [];
  for (const task of readdirSync(TASKS)) {
    const name = threadName(task);
    if (!WORKER_THREAD_NAMES.has(name)) continue;
    // Field 19 of stat is the nice value; the name (field 2) may hold spaces, so count after ')'.
    const stat = readFileSync(`${TASKS}/${task}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    threads.push({ name, nice: Number(fields[16]) });
  }
  return threads;
}
