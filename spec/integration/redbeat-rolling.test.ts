/**
 * A minute of rolling update between RedBeat (Smarter's Python Beat, `smarter/settings/base_aws.py`) and two
 * smarter-beat replicas on one Redis, 1-second entries: each run is sent exactly once, by whichever holds
 * RedBeat's lock. The five-minute run is in spec/faults/redbeat-rolling.test.ts.
 */
import { expectRollingExactlyOnce } from '../support/redbeat-rolling.js';

test('own wiring: rolling update RedBeat → two smarter-beat replicas → RedBeat, 60 s of 1-second entries: every run sent exactly once', async () => {
  await expectRollingExactlyOnce('60 s', 60_000, 40);
}, 120_000);
