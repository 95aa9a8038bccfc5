import { randomUUID } from 'node:crypto';
import { AttemptTable } from '../../lib/broker/amqp/attempt-table.js';

describe('AttemptTable (lib/broker/amqp/attempt-table.ts)', () => {
  test('forgets the oldest attempt past its bound, and a forgotten attempt comes back blank', () => {
    const t = new AttemptTable(3);
    const a = t.touch('a:0');
    t.bits[a] = 5;
    for (const k of ['b:0', 'c:0', 'd:0']) t.touch(k);
    expect(t.find('a:0')).toBeUndefined();
    expect(t.find('d:0')).toBeDefined();
    expect(t.bits[t.touch('a:0')]).toBe(0);
  });

  test('an attempt touched again after half the table turned over is moved up with its facts, and kept', () => {
    const t = new AttemptTable(6);
    const a = t.touch('a:0');
    t.bits[a] = 3;
    t.handedAt[a] = 7;
    t.handedConnection[a] = 2;
    t.parkedAt[a] = 5;
    for (const k of ['b:0', 'c:0', 'd:0', 'e:0']) t.touch(k);
    const moved = t.touch('a:0');
    expect(moved).not.toBe(a);
    expect([t.bits[moved], t.handedAt[moved], t.handedConnection[moved], t.parkedAt[moved]]).toEqual([3, 7, 2, 5]);
    for (const k of ['f:0', 'g:0']) t.touch(k);
    expect(t.find('a:0')).toBe(moved);
    expect(t.find('b:0')).toBeUndefined();
  });

  test('holds as many attempts as its bound, each with its own facts', () => {
    const t = new AttemptTable(5000);
    for (let i = 0; i < 5000; i++) t.handedAt[t.touch(`k${i}:0`)] = i + 1;
    for (const i of [0, 1023, 1024, 4999]) expect(t.handedAt[t.find(`k${i}:0`) ?? -1]).toBe(i + 1);
    t.touch('next:0');
    expect(t.find('k0:0')).toBeUndefined();
    expect(t.find('k1:0')).toBeDefined();
  });

  test('holds Celery task ids (UUIDs) as their attempts, through turns of the table past its bound', () => {
    const t = new AttemptTable(1000);
    const ids = Array.from({ length: 2500 }, () => randomUUID());
    ids.forEach((id, i) => {
      t.handedAt[t.touch(`${id}:0`)] = i + 1;
      if (i % 10 === 0) t.handedAt[t.touch(`${id}:1`)] = -(i + 1);
    });
    // 2,750 attempts taken: the last 1,000 are kept, each with its own facts.
    const kept = ids.slice(-900);
    kept.forEach((id) => expect(t.handedAt[t.find(`${id}:0`) ?? -1]).toBe(ids.indexOf(id) + 1));
    expect(t.handedAt[t.find(`${ids[2490]}:1`) ?? -1]).toBe(-2491);
    expect(t.find(`${ids[0]}:0`)).toBeUndefined();
    expect(t.find(`${ids[1000]}:0`)).toBeUndefined();
  });
});
