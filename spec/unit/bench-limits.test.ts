import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chartConcurrency, cores } from '../../bench/chart-limits.js';

test("Kubernetes CPU quantities as the chart writes them become cores: '250m', '1', 0.5, absent", () => {
  expect(cores('250m')).toBe(0.25);
  expect(cores('1')).toBe(1);
  expect(cores(0.5)).toBe(0.5);
  expect(cores('1500m')).toBe(1.5);
  expect(cores(undefined)).toBeUndefined();
});

test("the isolation bench runs each worker at its deployment's concurrency from the chart's values, else the CPU count", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chart-'));
  const file = path.join(dir, 'values.yaml');
  fs.writeFileSync(file, 'worker:\n  concurrency: 48\nworkerInfrastructure:\n  resources: {}\n');
  expect(chartConcurrency(file)).toEqual({ ops: 48, infra: os.availableParallelism() });
  fs.rmSync(dir, { recursive: true });
});
