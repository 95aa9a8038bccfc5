/**
 * Recycling when runs abandoned at their hard time limit still hold their resources
 * (SMARTER_WORKER_MAX_ABANDONED_RUNS): a run given up on whose code goes on is counted until that code ends, and as
 * a task ends with the count at the bound, the worker asks to be replaced, as with `--max-tasks-per-child`.
 */
import { Recycler } from '../../lib/control/recycle.js';
import { nullLogger } from '../../lib/logger.js';
import { Deadlines } from '../../lib/worker/run/deadlines.js';
import { RunControl, abandonedRunsStillGoing, runWithLimits } from '../../lib/worker/run/execute.js';

test('a run abandoned at its hard limit counts while its code goes on, and no longer once it ends', async () => {
  const deadlines = new Deadlines();
  const before = abandonedRunsStillGoing();
  let finish!: () => void;
  const code = new Promise<void>((r) => (finish = r));
  const r = await runWithLimits(() => code, { soft: null, hard: 0.05 }, new RunControl(), deadlines);
  expect(r).toMatchObject({ ok: false, abandoned: true });
  expect(abandonedRunsStillGoing()).toBe(before + 1);
  finish();
  await new Promise((res) => setImmediate(res));
  expect(abandonedRunsStillGoing()).toBe(before);
});

test('a run that ends in time is never counted', async () => {
  const before = abandonedRunsStillGoing();
  await runWithLimits(async () => 1, { soft: null, hard: 5 }, new RunControl(), new Deadlines());
  expect(abandonedRunsStillGoing()).toBe(before);
});

test('the recycle is asked once, when a task ends with the abandoned runs at the bound', () => {
  let going = 0;
  const reasons: string[] = [];
  const r = new Recycler(
    { maxTasks: null, maxMemoryKiB: null, maxAbandoned: 2 },
    (why) => reasons.push(why),
    nullLogger(),
    () => 0,
    () => going,
  );
  expect(r.enabled).toBe(true);
  going = 1;
  r.taskEnded();
  expect(reasons).toEqual([]);
  going = 2;
  r.taskEnded();
  r.taskEnded();
  expect(reasons).toEqual([
    '2 runs abandoned at their time limit still hold their resources (SMARTER_WORKER_MAX_ABANDONED_RUNS 2)',
  ]);
});

test('off by default: no bound, no recycle', () => {
  const reasons: string[] = [];
  const r = new Recycler(
    { maxTasks: null, maxMemoryKiB: null },
    (why) => reasons.push(why),
    nullLogger(),
    () => 0,
    () => 99,
  );
  expect(r.enabled).toBe(false);
  r.taskEnded();
  expect(reasons).toEqual([]);
});
