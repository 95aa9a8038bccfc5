import { delayRangeInWords, planEta } from '../../lib/worker/intake/eta.js';

const MAX = (2 ** 28 - 1) * 1000;

test('an ETA runs now, is held when near, is sent back to the broker when far, and is refused beyond its range', () => {
  const delayed = { holdMaxMs: 5000 };
  expect(planEta(0, delayed, MAX)).toBe('now');
  expect(planEta(-10, delayed, MAX)).toBe('now');
  expect(planEta(5000, delayed, MAX)).toBe('hold');
  expect(planEta(5001, delayed, MAX)).toBe('offload');
  expect(planEta(MAX, delayed, MAX)).toBe('offload');
  expect(planEta(MAX + 1, delayed, MAX)).toBe('beyond-range');
});

test('without native delay in use every future ETA is held, however far, as Celery does', () => {
  expect(planEta(MAX * 2, null, MAX)).toBe('hold');
  expect(planEta(0, null, MAX)).toBe('now');
});

test('the delay range in words', () => {
  expect(delayRangeInWords(MAX)).toBe('2^28 − 1 s, about 8.5 years');
});
