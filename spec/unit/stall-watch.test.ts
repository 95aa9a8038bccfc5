import { type Stall, StallWatch, healthOf } from '../../lib/control/stall-watch.js';

function watch(reportMs = 1000) {
  const seen: Stall[] = [];
  const w = new StallWatch({ reportMs, tickMs: 100, onStall: (s) => seen.push(s) });
  return { w, seen };
}

describe('StallWatch', () => {
  test('a tick on time or late by less than the threshold is no stall', () => {
    const { w, seen } = watch();
    expect(w.tick(100, 0)).toBeNull();
    expect(w.tick(200, 0)).toBeNull();
    expect(w.tick(1150, 0)).toBeNull(); // 850 ms late
    expect(seen).toEqual([]);
    expect(w.stalls).toBe(0);
  });

  test('a tick 2 s late is one stall of 2,000 ms, reported once with when the loop got free', () => {
    const { w, seen } = watch();
    w.tick(100, 0);
    const s = w.tick(2200, 5000);
    expect(s).toEqual({ blockedMs: 2000, at: 5000 });
    expect(seen).toEqual([{ blockedMs: 2000, at: 5000 }]);
    expect(w.tick(2300, 5100)).toBeNull();
    expect(w.stalls).toBe(1);
    expect(w.lastStall).toEqual({ blockedMs: 2000, at: 5000 });
  });
});

describe('healthOf (/healthz)', () => {
  const base = { livenessMs: 5000, degradedForMs: 60_000, now: 100_000 };

  test('no stall: 200 ok', () => {
    expect(healthOf({ ...base, maxDelayMs: 30, lastStall: null })).toEqual({ code: 200, body: 'ok\n' });
  });

  test('a 2 s stall 3 s ago: 200 degraded, naming it, not a 503 that would get the pod killed', () => {
    expect(healthOf({ ...base, maxDelayMs: 2000, lastStall: { blockedMs: 2000, at: 97_000 } })).toEqual({
      code: 200,
      body: 'degraded: event loop blocked for 2000 ms, 3 s ago\n',
    });
  });

  test('the stall older than the degraded window: 200 ok again', () => {
    expect(healthOf({ ...base, maxDelayMs: 20, lastStall: { blockedMs: 2000, at: 30_000 } })).toEqual({
      code: 200,
      body: 'ok\n',
    });
  });

  test('held past the liveness limit since the last probe: 503', () => {
    expect(healthOf({ ...base, maxDelayMs: 6000, lastStall: { blockedMs: 6000, at: 99_000 } })).toEqual({
      code: 503,
      body: 'event loop stalled for 6000 ms\n',
    });
  });
});
