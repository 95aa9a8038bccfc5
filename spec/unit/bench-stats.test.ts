import { median, percentile, ratio, rotated, summarize } from '../../bench/stats.js';

describe('bench statistics', () => {
  it('takes the median of odd and even counts, unsorted input, ignoring non-finite values', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([5, NaN, 1, Infinity])).toBe(3);
    expect(median([])).toBeNaN();
  });

  it('takes nearest-rank percentiles: p99 of 1..100 is 99, p50 is 50, p100 the max, p0 the min', () => {
    const xs = Array.from({ length: 100 }, (_, i) => 100 - i);
    expect(percentile(xs, 99)).toBe(99);
    expect(percentile(xs, 50)).toBe(50);
    expect(percentile(xs, 100)).toBe(100);
    expect(percentile(xs, 0)).toBe(1);
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([], 50)).toBeNaN();
  });

  it('summarizes a sample as n, median, min and max', () => {
    expect(summarize([2.5, 1, 9])).toEqual({ n: 3, median: 2.5, min: 1, max: 9 });
    expect(summarize([]).n).toBe(0);
  });

  it('gives a ratio only when both sides are numbers and the base is not zero', () => {
    expect(ratio(3, 2)).toBe(1.5);
    expect(ratio(1, 0)).toBeNaN();
    expect(ratio(NaN, 2)).toBeNaN();
  });

  it('rotates the systems per repetition, so each one goes first in turn', () => {
    expect(rotated(['a', 'b', 'c'], 0)).toEqual(['a', 'b', 'c']);
    expect(rotated(['a', 'b', 'c'], 1)).toEqual(['b', 'c', 'a']);
    expect(rotated(['a', 'b', 'c'], 4)).toEqual(['b', 'c', 'a']);
    expect(rotated([], 2)).toEqual([]);
  });
});
