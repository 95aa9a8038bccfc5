/**
 * Five minutes of rolling update between RedBeat (Smarter's Python Beat, `smarter/settings/base_aws.py`) and two
 * smarter-beat replicas on one Redis, 1-second entries: each run is sent exactly once, by whichever holds
 * RedBeat's lock. A 30-second run is in spec/integration/redbeat-rolling.test.ts.
 */
import { expectRollingExactlyOnce } from '../support/redbeat-rolling.js';

test('own wiring: rolling update RedBeat → two smarter-beat replicas → RedBeat, 5 minutes of 1-second entries: every run sent exactly once', async () => {
  await expectRollingExactlyOnce('5 min', 300_000, 240);
}, 420_000);
