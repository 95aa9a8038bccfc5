import { jest } from '@jest/globals';
import { Deadlines } from '../../lib/worker/run/deadlines.js';
import { RunControl, runWithLimits } from '../../lib/worker/run/execute.js';
import { MAX_TIMER_MS } from '../../lib/worker/long-timer.js';

beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }));
afterEach(() => jest.useRealTimers());

const clock = () => Date.now();

test('many deadlines share one Node timer and each fires at its time, in order, never early', () => {
  const d = new Deadlines(clock);
  const fired: number[] = [];
  for (const ms of [500, 100, 300, 100, 200]) d.add(ms, () => fired.push(ms));
  expect(jest.getTimerCount()).toBe(1);
  jest.advanceTimersByTime(99);
  expect(fired).toEqual([]);
  jest.advanceTimersByTime(1);
  expect(fired).toEqual([100, 100]);
  jest.advanceTimersByTime(400);
  expect(fired).toEqual([100, 100, 200, 300, 500]);
  expect(d.size).toBe(0);
  expect(jest.getTimerCount()).toBe(0);
});

test('a cancelled deadline never fires, and the others still do (cancel is idempotent)', () => {
  const d = new Deadlines(clock);
  const fired: string[] = [];
  const a = d.add(100, () => fired.push('a'));
  d.add(200, () => fired.push('b'));
  const c = d.add(150, () => fired.push('c'));
  a.cancel();
  a.cancel();
  c.cancel();
  expect(d.size).toBe(1);
  jest.advanceTimersByTime(1000);
  expect(fired).toEqual(['b']);
});

test('an earlier deadline added later re-arms the timer; when all are cancelled no timer is left', () => {
  const d = new Deadlines(clock);
  const fn = jest.fn();
  const late = d.add(10_000, fn);
  const early = d.add(50, fn);
  jest.advanceTimersByTime(50);
  expect(fn).toHaveBeenCalledTimes(1);
  late.cancel();
  early.cancel();
  expect(jest.getTimerCount()).toBe(0);
});

test('a deadline beyond the 2^31−1 ms timer cap fires at its due time, not at the cap', () => {
  const d = new Deadlines(clock);
  const fn = jest.fn();
  d.add(MAX_TIMER_MS + 60_000, fn);
  jest.advanceTimersByTime(MAX_TIMER_MS + 59_999);
  expect(fn).not.toHaveBeenCalled();
  jest.advanceTimersByTime(1);
  expect(fn).toHaveBeenCalledTimes(1);
});

test('an abort before the signal was read leaves a signal that reads aborted, with the first reason', () => {
  const c = new RunControl();
  const first = new Error('first');
  c.abort(first);
  c.abort(new Error('second'));
  expect(c.signal.aborted).toBe(true);
  expect(c.signal.reason).toBe(first);
});

test('runWithLimits: the hard limit fails the run as abandoned and cancels its deadlines when it ends', async () => {
  const d = new Deadlines(clock);
  const control = new RunControl();
  const never = runWithLimits(() => new Promise(() => undefined), { soft: 1, hard: 2 }, control, d);
  expect(d.size).toBe(2);
  await jest.advanceTimersByTimeAsync(1000);
  expect(control.signal.reason).toMatchObject({ name: 'SoftTimeLimitExceededError' });
  await jest.advanceTimersByTimeAsync(1000);
  await expect(never).resolves.toMatchObject({ ok: false, abandoned: true, error: { name: 'TimeLimitExceededError' } });
  const quick = await runWithLimits(() => Promise.resolve(7), { soft: 1, hard: 2 }, new RunControl(), d);
  expect(quick).toEqual({ ok: true, value: 7 });
  expect(d.size).toBe(0);
});

test('runWithLimits: code that returns a value has ended: its result comes back at once, not as a promise, and no deadline is left', () => {
  const d = new Deadlines(clock);
  const control = new RunControl();
  const r = runWithLimits(() => 7, { soft: 1, hard: 2 }, control, d);
  expect(r).toEqual({ ok: true, value: 7 });
  expect(d.size).toBe(0);
  expect(control.fail(new Error('late'))).toBe(false);
});

test('runWithLimits: code that reports its own error as it starts ends failed with it; the promise it returned is not waited for, and its rejection is handled', async () => {
  const d = new Deadlines(clock);
  const control = new RunControl();
  const reported = new Error('escaped as it started');
  let rejected = false;
  const r = runWithLimits(
    () => {
      control.fail(reported);
      return Promise.reject(new Error('rejected later')).catch((e: unknown) => {
        rejected = true;
        throw e;
      });
    },
    { soft: 1, hard: 2 },
    control,
    d,
  );
  expect(r).toEqual({ ok: false, error: reported });
  expect(control.signal.reason).toBe(reported);
  expect(d.size).toBe(0);
  // An unhandled rejection would fail this test file; let the rejection run its course.
  await jest.advanceTimersByTimeAsync(0);
  expect(rejected).toBe(true);
});

test('runWithLimits: code that throws as it starts fails the run with its error, and leaves no deadline or failer', async () => {
  const d = new Deadlines(clock);
  const control = new RunControl();
  const r = await runWithLimits(
    () => {
      throw new TypeError('bad start');
    },
    { soft: 1, hard: 2 },
    control,
    d,
  );
  expect(r).toMatchObject({ ok: false, error: { name: 'TypeError', message: 'bad start' } });
  expect(d.size).toBe(0);
  // The run is over: an error reported for it later is not its to end.
  expect(control.fail(new Error('late'))).toBe(false);
});

test('runWithLimits: an error reported for the run while it goes ends it at once, failed, and aborts its signal', async () => {
  const d = new Deadlines(clock);
  const control = new RunControl();
  const running = runWithLimits(() => new Promise(() => undefined), { soft: null, hard: 5 }, control, d);
  const escaped = new Error('escaped from a timer');
  expect(control.fail(escaped)).toBe(true);
  await expect(running).resolves.toEqual({ ok: false, error: escaped });
  expect(control.signal.reason).toBe(escaped);
  expect(d.size).toBe(0);
});
