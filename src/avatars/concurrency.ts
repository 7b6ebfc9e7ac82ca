/**
 * Bounds on work running at once: a slot pool with a queue, and one pool per key (origin host)
 * within an overall pool. A waiter whose signal ends leaves the queue.
 */

export class Slots {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly limit: number) {}

  /** Runs `work` when a slot is free; the slot is held until `work` settles. */
  async run<T>(work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    await this.acquire(signal);
    try {
      return await work();
    } finally {
      this.release();
    }
  }

  get idle(): boolean {
    return this.running === 0 && this.waiting.length === 0;
  }

  private acquire(signal: AbortSignal | undefined): Promise<void> {
    if (this.running < this.limit) {
      this.running++;
      return Promise.resolve();
    }
    if (signal?.aborted === true) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const grant = () => {
        signal?.removeEventListener('abort', onAbort);
        this.running++;
        resolve();
      };
      const onAbort = () => {
        const index = this.waiting.indexOf(grant);
        if (index >= 0) this.waiting.splice(index, 1);
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(grant);
    });
  }

  private release(): void {
    this.running--;
    this.waiting.shift()?.();
  }
}

/** At most `perKey` at once for one key, and `overall` at once in all. */
export class KeyedSlots {
  private readonly byKey = new Map<string, Slots>();
  private readonly all: Slots;

  constructor(
    private readonly perKey: number,
    overall: number,
  ) {
    this.all = new Slots(overall);
  }

  async run<T>(key: string, work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    let slots = this.byKey.get(key);
    if (slots === undefined) {
      slots = new Slots(this.perKey);
      this.byKey.set(key, slots);
    }
    const own = slots;
    try {
      return await own.run(() => this.all.run(work, signal), signal);
    } finally {
      // Idle pools are dropped: the map holds only hosts being fetched now.
      if (own.idle) this.byKey.delete(key);
    }
  }
}

/** The clock of a RateGate (and of AvatarImages' busy log): real time, or a test's. */
export interface GateClock {
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
}

export const REAL_CLOCK: GateClock = {
  now: () => performance.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms).unref(),
};

/**
 * A bound on work started per second: a token bucket filled at `perSecond` and holding at most
 * `burst` starts, with at most `queue` waiters served in order as tokens come. `admit` says at
 * once or after a wait whether the work may start; a waiter past the queue's bound is refused at
 * once (so none waits longer than about queue / perSecond seconds).
 */
export class RateGate {
  private tokens: number;
  private filledAt: number;
  private readonly waiting: Array<() => void> = [];
  private timerSet = false;

  constructor(
    readonly perSecond: number,
    readonly burst: number,
    readonly queue: number,
    private readonly clock: GateClock = REAL_CLOCK,
  ) {
    this.tokens = burst;
    this.filledAt = clock.now();
  }

  /** True when the work may start now or after waiting its turn; false when the queue is full. */
  admit(): Promise<boolean> {
    this.fill();
    if (this.waiting.length === 0 && this.tokens >= 1) {
      this.tokens -= 1;
      return Promise.resolve(true);
    }
    if (this.waiting.length >= this.queue) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      this.waiting.push(() => resolve(true));
      this.schedule();
    });
  }

  /** Requests waiting for their turn now. */
  get waiters(): number {
    return this.waiting.length;
  }

  private fill(): void {
    const now = this.clock.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.filledAt) * this.perSecond) / 1000);
    this.filledAt = now;
  }

  /** Wakes up when the next token is due, serves the waiters it can, and waits again for the rest. */
  private schedule(): void {
    if (this.timerSet || this.waiting.length === 0) return;
    this.timerSet = true;
    const due = Math.max(0, ((1 - this.tokens) * 1000) / this.perSecond);
    this.clock.setTimeout(() => {
      this.timerSet = false;
      this.fill();
      while (this.waiting.length > 0 && this.tokens >= 1) {
        this.tokens -= 1;
        this.waiting.shift()?.();
      }
      this.schedule();
    }, Math.ceil(due));
  }
}
