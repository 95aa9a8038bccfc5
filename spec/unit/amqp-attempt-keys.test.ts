import { randomUUID } from 'node:crypto';
import { AttemptKeys } from '../../lib/broker/amqp/attempt-keys.js';

/** A repeatable stream of numbers in [0, 1), so that a failing sequence can be run again. */
function seeded(seed: number): () => number {
  let x = seed;
  return () => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    return x / 2 ** 32;
  };
}

describe('AttemptKeys (lib/broker/amqp/attempt-keys.ts)', () => {
  test('a task id is compared exactly: case, retries and their spelling tell attempts apart', () => {
    const id = randomUUID();
    const keys = [
      `${id}:0`,
      `${id}:1`,
      `${id}:01`,
      `${id.toUpperCase()}:0`,
      `${id}:-1`,
      `${id}:1.5`,
      `${id.replaceAll('-', '')}:0`,
      `${id}x:0`,
      `${id}:4294967296`,
      'celery-task-meta:0',
      ':0',
    ];
    const k = new AttemptKeys(keys.length);
    keys.forEach((key, slot) => k.set(slot, key));
    keys.forEach((key, slot) => expect(k.find(key)).toBe(slot));
    expect(k.find(`${id}:2`)).toBeUndefined();
    expect(k.find(`${randomUUID()}:0`)).toBeUndefined();
  });

  test('a cleared key is gone and every other key is still found, over random turns of a small full table', () => {
    const max = 48;
    const k = new AttemptKeys(max);
    const model = new Map<number, string>();
    const rnd = seeded(7);
    const ids = Array.from({ length: 200 }, (_, i) => (i % 5 === 0 ? `text-id-${i}` : randomUUID()));
    for (let turn = 0; turn < 20_000; turn++) {
      const slot = Math.floor(rnd() * max);
      k.clear(slot);
      model.delete(slot);
      if (rnd() < 0.7) {
        const key = `${ids[Math.floor(rnd() * ids.length)]}:${Math.floor(rnd() * 3)}`;
        if (![...model.values()].includes(key)) {
          k.set(slot, key);
          model.set(slot, key);
        }
      }
      if (turn % 97 === 0) {
        for (const [s, key] of model) expect(k.find(key)).toBe(s);
        for (const id of ids.slice(0, 20)) {
          const key = `${id}:0`;
          const held = [...model].find(([, v]) => v === key)?.[0];
          expect(k.find(key)).toBe(held);
        }
      }
    }
  });
});
