import { DEFAULT_HELD_BYTES, HeldBytes, HeldWindow } from '../../lib/broker/amqp/held-window.js';

const MiB = 1024 * 1024;

/** Deliveries of `bytes` each, one window's worth at a time, as a consumer whose one tag has the whole window. */
function feed(w: HeldWindow, bytes: number, rounds: number): number[] {
  const sizes: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const taken = w.size;
    for (let i = 0; i < Math.max(1, taken); i++) w.arrived(bytes, taken);
    sizes.push(w.size);
  }
  return sizes;
}

describe('a consumer window bounded by bytes', () => {
  test('opens at one and doubles after each window of small deliveries, up to the prefetch', () => {
    const w = new HeldWindow(16, DEFAULT_HELD_BYTES);
    expect(w.size).toBe(1);
    expect(feed(w, 1000, 6)).toEqual([2, 4, 8, 16, 16, 16]);
  });

  test('never widens beyond as many of the largest delivery seen as fit the budget', () => {
    const w = new HeldWindow(128, 16 * MiB);
    // 3 MiB each: five fit in 16 MiB.
    expect(feed(w, 3 * MiB, 5)).toEqual([2, 4, 5, 5, 5]);
  });

  test('a delivery over the budget keeps it at one; after a pause it starts again at what fits', () => {
    const w = new HeldWindow(16, 16 * MiB);
    expect(feed(w, 20 * MiB, 3)).toEqual([1, 1, 1]);
    feed(w, 1000, 4);
    expect(w.size).toBe(16);
    w.arrived(20 * MiB, 16);
    w.resumed();
    expect(w.size).toBe(1);
  });

  test('an unlimited prefetch (0) stays bounded by the budget until the messages are tiny', () => {
    const w = new HeldWindow(0, 16 * MiB);
    expect(feed(w, MiB, 6)).toEqual([2, 4, 8, 16, 16, 16]);
    const tiny = new HeldWindow(0, 16 * MiB);
    expect(feed(tiny, 10, 17).at(-1)).toBe(0);
  });

  test('held bytes are over the budget only past it', () => {
    const h = new HeldBytes(100);
    h.add(100);
    expect(h.over).toBe(false);
    h.add(1);
    expect(h.over).toBe(true);
    h.remove(1);
    expect(h.over).toBe(false);
  });
});
