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
