/**
 * What copies.ts remembers of each task attempt it met lately, kept compact: a busy worker meets every attempt,
 * so the table is full at its bound most of the time, and an entry is a slot of typed arrays (about 70 bytes with
 * its key, attempt-keys.ts) instead of an object graph (about 300). The oldest attempts are forgotten past `max`;
 * one touched again once half the table has turned over since it was made is moved up, so an attempt is kept for
 * at least `max / 2` newer ones after it was last touched.
 */

import { AttemptKeys } from './attempt-keys.js';

export class AttemptTable {
  private readonly keys: AttemptKeys;
  // Sized to the bound at once: the memory of a typed array is the system's zeroed pages, resident only once
  // written, so a worker that meets few attempts holds few pages.
  /** The facts of each slot (copies.ts gives the bits their meaning). */
  readonly bits: Uint16Array;
  /** When the copy handed on last was handed on, on which connection; when it was last parked from here (0: never). */
  readonly handedAt: Float64Array;
  readonly handedConnection: Uint32Array;
  readonly parkedAt: Float64Array;
  /** How many slots were taken since start (slot `n % max` is the n-th taken), and when each slot was. */
  private taken = 0;
  private readonly made: Float64Array;

  constructor(private readonly max: number) {
    this.bits = new Uint16Array(max);
    this.handedAt = new Float64Array(max);
    this.handedConnection = new Uint32Array(max);
    this.parkedAt = new Float64Array(max);
    this.made = new Float64Array(max);
    this.keys = new AttemptKeys(max);
  }

  /** The slot of `attempt`, or undefined when it is not remembered. */
  find(attempt: string): number | undefined {
    return this.keys.find(attempt);
  }

  /** The slot of `attempt`, made (blank) when it is not remembered, moved up when it is old. */
  touch(attempt: string): number {
    const slot = this.keys.find(attempt);
    if (slot === undefined) return this.take(attempt);
    if (this.taken - (this.made[slot] ?? 0) <= this.max / 2) return slot;
    const [bits, handedAt, connection, parkedAt] = [
      this.bits[slot] ?? 0,
      this.handedAt[slot] ?? 0,
      this.handedConnection[slot] ?? 0,
      this.parkedAt[slot] ?? 0,
    ];
    this.keys.clear(slot);
    const moved = this.take(attempt);
    this.bits[moved] = bits;
    this.handedAt[moved] = handedAt;
    this.handedConnection[moved] = connection;
    this.parkedAt[moved] = parkedAt;
    return moved;
  }

  private take(attempt: string): number {
    const slot = this.taken % this.max;
    this.taken++;
    this.keys.clear(slot);
    this.keys.set(slot, attempt);
    this.made[slot] = this.taken;
    this.bits[slot] = 0;
    this.handedAt[slot] = 0;
    this.handedConnection[slot] = 0;
    this.parkedAt[slot] = 0;
    return slot;
  }
}
