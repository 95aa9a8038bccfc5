/**
 * Every time limit and wait budget of a worker's runs on one armed Node timer: a min-heap of deadlines.
 * A `setTimeout` per run per limit cost two timers (and their clears) per task even though nearly all of
 * them never fire; here adding or cancelling a deadline is a heap operation, and the Node timer is re-armed
 * only when the earliest deadline moves earlier or fires. A deadline never fires early (it is checked
 * against the clock when the timer fires, and delays beyond Node's 2^31−1 ms cap are re-armed).
 */
import { MAX_TIMER_MS } from '../long-timer.js';

export interface Deadline {
  /** Idempotent; a deadline that already fired is not affected. */
  cancel(): void;
}

/** A class, so that a deadline costs one object and no closure (a run adds one or more). */
class Entry implements Deadline {
  constructor(
    private readonly owner: Deadlines,
    readonly at: number,
    readonly seq: number,
    public index: number,
    readonly ref: boolean,
    readonly fire: () => void,
  ) {}

  cancel(): void {
    this.owner.remove(this);
  }
}

export class Deadlines {
  private readonly heap: Entry[] = [];
  private timer: NodeJS.Timeout | undefined;
  private armedAt = Infinity;
  private seq = 0;
  /** Deadlines that keep the process alive (a time limit does; a wait-budget report does not). */
  private refs = 0;

  constructor(private readonly now: () => number = () => performance.now()) {}

  get size(): number {
    return this.heap.length;
  }

  /** Calls `fire` once `delayMs` have passed, unless cancelled first. `ref: false` is an unref'd timer's. */
  add(delayMs: number, fire: () => void, opts: { ref?: boolean } = {}): Deadline {
    const entry = new Entry(
      this,
      this.now() + Math.max(0, delayMs),
      this.seq++,
      this.heap.length,
      opts.ref ?? true,
      fire,
    );
    this.heap.push(entry);
    this.up(entry.index);
    if (entry.ref) this.refs++;
    this.arm();
    return entry;
  }

  /** `Deadline.cancel`. */
  remove(entry: Entry): void {
    const i = entry.index;
    if (i < 0) return;
    entry.index = -1;
    if (entry.ref) this.refs--;
    const last = this.heap.pop();
    if (last !== undefined && last !== entry) {
      this.heap[i] = last;
      last.index = i;
      this.down(i);
      this.up(last.index);
    }
    // The armed timer is left as it is when the earliest goes: it fires, finds nothing due and re-arms.
    if (this.heap.length === 0) this.disarm();
    else this.setRef();
  }

  private arm(): void {
    const first = this.heap[0];
    if (first === undefined) return this.disarm();
    if (this.timer !== undefined && first.at >= this.armedAt) return this.setRef();
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.armedAt = first.at;
    this.timer = setTimeout(
      () => this.onTimer(),
      Math.min(Math.max(1, Math.ceil(first.at - this.now())), MAX_TIMER_MS),
    );
    this.setRef();
  }

  private setRef(): void {
    if (this.refs > 0) this.timer?.ref();
    else this.timer?.unref();
  }

  private disarm(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.armedAt = Infinity;
  }

  private onTimer(): void {
    this.timer = undefined;
    this.armedAt = Infinity;
    const now = this.now();
    try {
      for (let first = this.heap[0]; first !== undefined && first.at <= now; first = this.heap[0]) {
        this.remove(first);
        first.fire();
      }
    } finally {
      // Re-armed even when a callback threw (the error still reaches the process as a timer's would).
      this.arm();
    }
  }

  private less(a: Entry, b: Entry): boolean {
    return a.at < b.at || (a.at === b.at && a.seq < b.seq);
  }

  private swap(i: number, j: number): void {
    const a = this.heap[i] as Entry;
    const b = this.heap[j] as Entry;
    this.heap[i] = b;
    this.heap[j] = a;
    a.index = j;
    b.index = i;
  }

  private up(i: number): void {
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(this.heap[i] as Entry, this.heap[p] as Entry)) return;
      this.swap(i, p);
      i = p;
    }
  }

  private down(i: number): void {
    const n = this.heap.length;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < n && this.less(this.heap[l] as Entry, this.heap[m] as Entry)) m = l;
      if (r < n && this.less(this.heap[r] as Entry, this.heap[m] as Entry)) m = r;
      if (m === i) return;
      this.swap(i, m);
      i = m;
    }
  }
}
