import { jest } from '@jest/globals';
import { MAX_TIMER_MS, setLongTimeout } from '../../lib/worker/long-timer.js';

beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }));
afterEach(() => jest.useRealTimers());

test("a delay beyond setTimeout's 2^31−1 ms cap fires at its due time, not at the cap", () => {
  const fn = jest.fn();
  setLongTimeout(fn, MAX_TIMER_MS + 60_000);
  jest.advanceTimersByTime(MAX_TIMER_MS);
  expect(fn).not.toHaveBeenCalled();
  jest.advanceTimersByTime(59_999);
  expect(fn).not.toHaveBeenCalled();
  jest.advanceTimersByTime(1);
  expect(fn).toHaveBeenCalledTimes(1);
});

test('a delay of several caps (year 9999) never fires within them', () => {
  const fn = jest.fn();
  setLongTimeout(fn, 5 * MAX_TIMER_MS);
  jest.advanceTimersByTime(5 * MAX_TIMER_MS - 1);
  expect(fn).not.toHaveBeenCalled();
  jest.advanceTimersByTime(1);
  expect(fn).toHaveBeenCalledTimes(1);
});

test('a short delay fires once at its time, and a cleared timer never fires', () => {
  const fn = jest.fn();
  const cleared = jest.fn();
  setLongTimeout(fn, 1500);
  const t = setLongTimeout(cleared, MAX_TIMER_MS + 10);
  jest.advanceTimersByTime(1499);
  expect(fn).not.toHaveBeenCalled();
  jest.advanceTimersByTime(1);
  expect(fn).toHaveBeenCalledTimes(1);
  jest.advanceTimersByTime(MAX_TIMER_MS - 2000);
  t.clear();
  jest.advanceTimersByTime(MAX_TIMER_MS);
  expect(cleared).not.toHaveBeenCalled();
});
