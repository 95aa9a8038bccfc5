/**
 * A minute of rolling update between RedBeat (Smarter's Python Beat, `smarter/settings/base_aws.py`) and two
 * smarter-beat replicas on one Redis, 1-second entries: each run is sent exactly once, by whichever holds
 * RedBeat's lock. The five-minute run is in spec/faults/redbeat-rolling.test.ts.
 */
import { describeRolling, rollingUpdate, runsCheck } from '../support/redbeat-rolling.js';
import { redisScope } from '../support/redis.js';

test('rolling update RedBeat → two smarter-beat replicas → RedBeat, 60 s of 1-second entries: every run sent exactly once', async () => {
  const scope = redisScope();
  try {
    const r = await rollingUpdate(scope, 60_000);
    process.stdout.write(`redbeat rolling 60 s: ${describeRolling(r)}\n`);
    expect(runsCheck(r)).toEqual({ duplicates: [], missing: [] });
    expect(r.sends.length).toBe(Object.values(r.finalCounts).reduce((a, b) => a + b, 0));
    expect(r.published).toBe(r.sends.filter((s) => s.who.startsWith('smarter')).length);
    // Every process sent in its turn, and no handover left an entry unsent longer than a few seconds.
    expect(new Set(r.sends.map((s) => s.who)).size).toBeGreaterThanOrEqual(3);
    expect(r.maxGapMs).toBeLessThan(5000);
    // One run per second and entry, give or take the handovers.
    for (const n of Object.values(r.finalCounts)) expect(n).toBeGreaterThan(40);
  } finally {
    await scope.close();
  }
}, 120_000);
