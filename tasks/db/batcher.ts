/**
 * Group commit for many small writes. The first item goes out at once (no added latency when idle); items
 * that arrive while a batch is in flight wait for it and then go together, so under load one INSERT and one
 * commit carry many tasks' rows. Each caller's promise settles with its own item's outcome: when a batch
 * fails, its items are tried one by one, so a bad row fails only its own task.
 */
export class Batcher<I, O> {
  private queue: { item: I; resolve: (o: O) => void; reject: (e: unknown) => void }[] = [];
  private flushing = false;

  constructor(
    private readonly run: (items: I[]) => Promise<O[]>,
    private readonly maxBatch = 500,
  ) {}

  submit(item: I): Promise<O> {
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
      try {
        const out = await this.run(batch.map((b) => b.item));
        batch.forEach((b, i) => b.resolve(out[i] as O));
      } catch (err) {
        if (batch.length === 1) batch[0]?.reject(err);
        else await Promise.all(batch.map((b) => this.run([b.item]).then((o) => b.resolve(o[0] as O), b.reject)));
      }
    }
    this.flushing = false;
  }
}
