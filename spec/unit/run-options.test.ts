import { type RunDefaults, resolveRunOptions } from '../../lib/worker/run/run-options.js';

const defaults: RunDefaults = {
  acksLate: false,
  acksOnFailureOrTimeout: true,
  waitBudget: 5,
  trackStarted: false,
  ignoreResult: false,
  timeLimit: 300,
  softTimeLimit: 240,
};
const none = { ignoreResult: null, timelimit: [null, null] as [number | null, number | null] };

test('with nothing said, the worker defaults apply', () => {
  expect(resolveRunOptions(none, {}, defaults)).toEqual({
    policy: { acksLate: false, acksOnFailureOrTimeout: true, deadLetterOnFailure: false },
    ignoreResult: false,
    trackStarted: false,
    limits: { hard: 300, soft: 240 },
    waitBudget: 5,
  });
});

test('task options override the defaults; the message headers override both', () => {
  const task = {
    acksLate: true,
    ignoreResult: true,
    trackStarted: true,
    timeLimit: 60,
    softTimeLimit: 50,
    deadLetterOnExhaustion: true,
  };
  const o = resolveRunOptions(none, task, defaults);
  expect(o).toMatchObject({
    policy: { acksLate: true, deadLetterOnFailure: true },
    ignoreResult: true,
    trackStarted: true,
    limits: { hard: 60, soft: 50 },
  });
  const fromMessage = resolveRunOptions({ ignoreResult: false, timelimit: [10, 8] }, task, defaults);
  expect(fromMessage).toMatchObject({ ignoreResult: false, limits: { hard: 10, soft: 8 } });
});

test("this worker's time limits for a task (remote control) replace the task's own; the message's still come first", () => {
  const task = { timeLimit: 60, softTimeLimit: 50 };
  expect(resolveRunOptions(none, task, defaults, { timeLimit: 20, softTimeLimit: 15 }).limits).toEqual({
    hard: 20,
    soft: 15,
  });
  // A limit cleared by remote control falls back to the worker's default, not to the task's own.
  expect(
    resolveRunOptions({ ignoreResult: null, timelimit: [9, null] }, task, defaults, { timeLimit: 20 }).limits,
  ).toEqual({ hard: 9, soft: 240 });
});
