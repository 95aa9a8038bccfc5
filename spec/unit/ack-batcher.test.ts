import { AckBatcher, type AckSlot } from '../../lib/broker/amqp/ack-batcher.js';

/**
 * The broker's side of one channel: the tags it delivered and still holds. A `multiple` ack takes every
 * held tag up to its own, so the test fails the moment one of them was not acked by the worker.
 */
class Channel {
  readonly held = new Set<number>();
  readonly ackedByWorker = new Set<number>();
  readonly brokerAcked: number[] = [];
  frames: string[] = [];
  private next = 1;
  private flushes: Array<() => void> = [];
  readonly batcher = new AckBatcher<number>(
    (tag, multiple) => this.receive(tag, multiple),
    (f) => this.flushes.push(f),
  );

  deliver(): AckSlot<number> {
    const tag = this.next++;
    this.held.add(tag);
    return this.batcher.track(tag, tag);
  }

  ack(slot: AckSlot<number>): void {
    this.ackedByWorker.add(slot.tag);
    this.batcher.ack(slot);
  }

  reject(slot: AckSlot<number>): void {
    this.held.delete(slot.tag);
    this.frames.push(`reject ${slot.tag}`);
    this.batcher.release(slot);
  }

  /** The end of an event-loop turn. */
  turn(): void {
    const f = this.flushes;
    this.flushes = [];
    for (const fn of f) fn();
  }

  get scheduled(): number {
    return this.flushes.length;
  }

  private receive(tag: number, multiple: boolean): void {
    this.frames.push(`ack ${tag}${multiple ? ' multiple' : ''}`);
    const covered = multiple ? [...this.held].filter((t) => t <= tag) : [tag];
    for (const t of covered) {
      if (!this.held.has(t)) throw new Error(`ack of ${t}, which the broker no longer holds (acked twice?)`);
      if (!this.ackedByWorker.has(t)) throw new Error(`ack of ${t}, whose task has not settled`);
      this.held.delete(t);
      this.brokerAcked.push(t);
    }
  }
}

/** A fresh channel and the slots of its first three deliveries (tags 1, 2 and 3). */
function threeDelivered(): [Channel, AckSlot<number>, AckSlot<number>, AckSlot<number>] {
  const ch = new Channel();
  return [ch, ch.deliver(), ch.deliver(), ch.deliver()];
}

describe('the AMQP ack batcher', () => {
  test('acks settled in delivery order go out as one multiple ack at the end of the turn, scheduled once', () => {
    const ch = new Channel();
    const slots = Array.from({ length: 5 }, () => ch.deliver());
    for (const s of slots) ch.ack(s);
    expect(ch.frames).toEqual([]);
    expect(ch.scheduled).toBe(1);
    ch.turn();
    expect(ch.frames).toEqual(['ack 5 multiple']);
    expect(ch.held.size).toBe(0);
  });

  test('a settled tag beyond an unsettled one is acked alone, never by a multiple ack over the unsettled one', () => {
    const [ch, a, b, c] = threeDelivered();
    ch.ack(b);
    ch.ack(c);
    ch.turn();
    expect(ch.frames).toEqual(['ack 2', 'ack 3']);
    expect(ch.held).toEqual(new Set([1]));
    ch.ack(a);
    ch.turn();
    expect(ch.frames).toEqual(['ack 2', 'ack 3', 'ack 1']);
    expect(ch.held.size).toBe(0);
  });

  test('a rejected tag between acked ones does not stop the multiple ack, and is not acked by it', () => {
    const [ch, a, b, c] = threeDelivered();
    ch.ack(a);
    ch.reject(b);
    ch.ack(c);
    ch.turn();
    expect(ch.frames).toEqual(['reject 2', 'ack 3 multiple']);
    expect(ch.brokerAcked.sort()).toEqual([1, 3]);
  });

  test('any order of settlement, acks and rejects, flushed at random turns: each acked tag reaches the broker once, no other', () => {
    let seed = 42;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let round = 0; round < 50; round++) {
      const ch = new Channel();
      const open: AckSlot<number>[] = [];
      const rejected = new Set<number>();
      for (let step = 0; step < 400; step++) {
        const r = random();
        if (r < 0.4 || open.length === 0) open.push(ch.deliver());
        else if (r < 0.8) {
          const [s] = open.splice(Math.floor(random() * open.length), 1);
          if (!s) continue;
          if (random() < 0.1) {
            ch.reject(s);
            rejected.add(s.tag);
          } else ch.ack(s);
        } else ch.turn();
      }
      for (const s of open) ch.ack(s);
      ch.turn();
      expect(ch.held.size).toBe(0);
      expect(new Set(ch.brokerAcked).size).toBe(ch.brokerAcked.length);
      expect(ch.brokerAcked.length).toBe(ch.ackedByWorker.size);
      expect(ch.batcher.waiting).toBe(0);
    }
  });

  test('on a lost channel, acks still waiting are reported, never sent; the next channel starts afresh', () => {
    const ch = new Channel();
    const [a, b] = [ch.deliver(), ch.deliver()] as const;
    ch.ack(a);
    ch.ack(b);
    expect(ch.batcher.drop()).toEqual([1, 2]);
    ch.turn();
    expect(ch.frames).toEqual([]);
    // A delivery of the dead channel settled after the loss is refused, so its caller counts it stale.
    expect(ch.batcher.ack(ch.batcher.track(3, 3))).toBe(false);

    const next = new Channel();
    const c = next.deliver();
    next.ack(c);
    next.turn();
    expect(next.frames).toEqual(['ack 1']);
  });

  test('when the channel refuses a flush, its acks stay waiting and are reported by the drop that follows', () => {
    const sent: number[] = [];
    let fail = true;
    const batcher = new AckBatcher<string>(
      (tag) => {
        if (fail) throw new Error('Channel closed');
        sent.push(tag);
      },
      () => undefined,
    );
    const s = batcher.track(1, 'one');
    batcher.ack(s);
    expect(() => batcher.flush()).toThrow('Channel closed');
    expect(batcher.waiting).toBe(1);
    fail = false;
    expect(batcher.drop()).toEqual(['one']);
    expect(sent).toEqual([]);
  });
});
