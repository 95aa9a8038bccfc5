/**
 * Group commit for many small writes. The first item goes out at once (no added latency when idle); items
 * that arrive while a batch is in flight wait for it and then go together, so under load one INSERT and one
 * commit carry many tasks' rows. Each caller's promise settles with its own item's outcome: when a batch
 * fails for a reason one row can cause (`splitOn`: a bad value, a duplicate), its items are tried one by one,
 * so a bad row fails only its own task. Any other failure (a lock wait timeout, a deadlock, a lost connection)
 * fails every item of the batch at once, and the items queued behind it too: they waited on it, and would wait
 * on the same lock again. Tried one by one instead, on the pool's few connections, one attempt would last many
 * lock timeouts.
 */
export interface BatcherOptions {
  maxBatch?: number;
  /** Whether a failed batch is tried again one item at a time; absent, always. */
  splitOn?: (err: unknown) => boolean;
  /** Names the batches for `submit`'s `onBatch` (`create_charge batch 12`). */
  name?: string;
}

export class Batcher<I, O> {
  private queue: { item: I; resolve: (o: O) => void; reject: (e: unknown) => void }[] = [];
  private flushing = false;
  /** Batches begun; the one in flight, which items submitted meanwhile wait on. */
  private begun = 0;
  private inFlight: number | undefined;
  private readonly maxBatch: number;

  constructor(
    private readonly run: (items: I[]) => Promise<O[]>,
    private readonly options: BatcherOptions = {},
  ) {
    this.maxBatch = options.maxBatch ?? 500;
  }

  /**
   * `onBatch` learns, at once, what the item waits on (to say so): the batch in flight, or the one it goes in.
   */
  submit(item: I, onBatch?: (batch: string) => void): Promise<O> {
    onBatch?.(`${this.options.name ?? 'batch'} ${this.inFlight ?? this.begun + 1}`);
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.flushing) {
        this.flushing = true;
        // Let the rest of this tick's submissions join the first batch.
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      this.inFlight = ++this.begun;
      try {
        const out = await this.run(batch.map((b) => b.item));
        batch.forEach((b, i) => b.resolve(out[i] as O));
      } catch (err) {
        if (this.options.splitOn?.(err) ?? true) {
          if (batch.length === 1) batch[0]?.reject(err);
          else await Promise.all(batch.map((b) => this.run([b.item]).then((o) => b.resolve(o[0] as O), b.reject)));
        } else {
          for (const b of [...batch, ...this.queue.splice(0)]) b.reject(err);
        }
      } finally {
        this.inFlight = undefined;
      }
    }
    this.flushing = false;
  }
}
