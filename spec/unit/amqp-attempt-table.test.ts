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
});
