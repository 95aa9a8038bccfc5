/**
 * Thirty seconds of rolling update between RedBeat (Smarter's Python Beat, `smarter/settings/base_aws.py`) and
 * two smarter-beat replicas on one Redis, 1-second entries: each run is sent exactly once, by whichever holds
 * RedBeat's lock. The five-minute run is in spec/faults/redbeat-rolling.test.ts.
 */
import { expectRollingExactlyOnce } from '../support/redbeat-rolling.js';

// Every step of the update still gets 1.5 s or more (a clean handover takes under 2 s; a stop releases the lock),
// and each of its ~90 runs must be sent exactly once; the long run is the fault suite's.
test('own wiring: rolling update RedBeat → two smarter-beat replicas → RedBeat, 30 s of 1-second entries: every run sent exactly once', async () => {
  await expectRollingExactlyOnce('30 s', 30_000, 20);
}, 90_000);
