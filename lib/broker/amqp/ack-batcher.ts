/**
 * Acks of one AMQP channel, sent in batches: a task settled now is acked at the end of this turn of the
 * event loop, and the contiguous run of settled delivery tags from the oldest unsettled one is acked by one
 * `basic.ack(multiple)`. One ack frame per turn instead of one per message is most of what a worker pays
 * the broker per task.
 *
 * A `multiple` ack acks every delivery of the channel up to its tag that the broker still holds, so it is
 * sent only over tags that are all settled here: every delivery that must be settled is tracked, in the
 * order the broker delivered it (its tags increase). A settled tag beyond an unsettled one cannot wait for
 * it (that task may run for hours, and an early ack must reach the broker now), so it goes alone.
 * Rejections never wait: the caller sends them at once and `release`s their slot, which a later `multiple`
 * ack then passes over (the broker has forgotten that tag already).
 */

import type { Channel, ConsumeMessage } from 'amqplib';

const UNSETTLED = 0;
const ACKED = 1;
const DONE = 2;

export interface AckSlot<T> {
  readonly tag: number;
  readonly meta: T;
  state: typeof UNSETTLED | typeof ACKED | typeof DONE;
}

export class AckBatcher<T> {
  private slots: AckSlot<T>[] = [];
  private head = 0;
  /** Acked slots not yet sent. */
  private pending = 0;
  private scheduled = false;
  private dropped = false;

  /**
   * @param send writes one `basic.ack` (throws if the channel is gone)
   * @param schedule runs the flush later; the end of this event-loop turn by default
   */
  constructor(
    private readonly send: (tag: number, multiple: boolean) => void,
    private readonly schedule: (flush: () => void) => void = (f) => void setImmediate(f),
  ) {}

  /** A delivery that must be settled, in delivery order. */
  track(tag: number, meta: T): AckSlot<T> {
    const slot: AckSlot<T> = { tag, meta, state: UNSETTLED };
    this.slots.push(slot);
    return slot;
  }

  /** The slot's task is settled by an ack: it goes out with the next flush. False once dropped (not sent). */
  ack(slot: AckSlot<T>): boolean {
    if (this.dropped) return false;
    if (slot.state !== UNSETTLED) return true;
    slot.state = ACKED;
    this.pending++;
    if (!this.scheduled) {
      this.scheduled = true;
      this.schedule(() => this.flush());
    }
    return true;
  }

  /** The slot was settled otherwise (rejected, already sent): later acks pass over it. */
  release(slot: AckSlot<T>): void {
    if (slot.state === ACKED) this.pending--;
    slot.state = DONE;
  }

  /** Acks that wait for the next flush. */
  get waiting(): number {
    return this.pending;
  }

  /** Sends every waiting ack now. If `send` throws, the slots not sent stay waiting (see `drop`). */
  flush(): void {
    this.scheduled = false;
    if (this.pending === 0 || this.dropped) {
      this.compact();
      return;
    }
    let upTo = -1;
    let count = 0;
    let i = this.head;
    for (; i < this.slots.length; i++) {
      const s = this.slots[i] as AckSlot<T>;
      if (s.state === UNSETTLED) break;
      if (s.state === ACKED) {
        upTo = s.tag;
        count++;
      }
    }
    if (count > 0) {
      this.send(upTo, count > 1);
      for (let j = this.head; j < i; j++) (this.slots[j] as AckSlot<T>).state = DONE;
      this.pending -= count;
    }
    this.head = i;
    // Beyond the oldest unsettled delivery: one by one.
    for (let j = i; this.pending > 0 && j < this.slots.length; j++) {
      const s = this.slots[j] as AckSlot<T>;
      if (s.state !== ACKED) continue;
      this.send(s.tag, false);
      s.state = DONE;
      this.pending--;
    }
    this.compact();
  }

  /** The channel is gone: nothing more is sent; returns what was acked here but never reached the broker. */
  drop(): T[] {
    this.dropped = true;
    const lost = this.slots
      .slice(this.head)
      .filter((s) => s.state === ACKED)
      .map((s) => s.meta);
    this.slots = [];
    this.head = 0;
    this.pending = 0;
    return lost;
  }

  private compact(): void {
    while (this.head < this.slots.length && (this.slots[this.head] as AckSlot<T>).state === DONE) this.head++;
    if (this.head === this.slots.length) {
      this.slots.length = 0;
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.slots.length) {
      this.slots = this.slots.slice(this.head);
      this.head = 0;
    }
  }
}

/**
 * A batcher of `ch`'s acks, flushed after this turn of the event loop. A flush the channel refuses (it closed
 * under us) leaves what it did not send waiting, and calls `refused`.
 */
export function channelAcks<T>(ch: Channel, refused: (batcher: AckBatcher<T>) => void): AckBatcher<T> {
  const batcher: AckBatcher<T> = new AckBatcher<T>(
    // amqplib reads only the delivery tag of the message it acks.
    (tag, multiple) => ch.ack({ fields: { deliveryTag: tag } } as ConsumeMessage, multiple),
    (flush) =>
      void setImmediate(() => {
        try {
          flush();
        } catch {
          refused(batcher);
        }
      }),
  );
  return batcher;
}
