import { cores } from '../../bench/chart-limits.js';

test("Kubernetes CPU quantities as the chart writes them become cores: '250m', '1', 0.5, absent", () => {
  expect(cores('250m')).toBe(0.25);
  expect(cores('1')).toBe(1);
  expect(cores(0.5)).toBe(0.5);
  expect(cores('1500m')).toBe(1.5);
  expect(cores(undefined)).toBeUndefined();
});
