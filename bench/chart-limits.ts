/**
 * The two worker deployments' CPU requests and limits, read from the Helm chart's values, as cgroups: both on
 * core 1 (core 0 is the broker's, see isolation-limits.ts), sharing it by their requests, each capped by its limit;
 * and their concurrency.
 */
import fs from 'node:fs';
import os from 'node:os';
import yaml from 'js-yaml';
import { type CpuGroup, type CpuLimit, cpuGroup } from './cgroups.js';

interface Resources {
  requests?: { cpu?: string | number };
  limits?: { cpu?: string | number };
}

/** Kubernetes CPU quantity ("250m", "1", 0.5) in cores. */
export function cores(q: string | number | undefined): number | undefined {
  if (q === undefined) return undefined;
  const t = String(q);
  return t.endsWith('m') ? Number(t.slice(0, -1)) / 1000 : Number(t);
}

function limitOf(r: Resources | undefined, cpus: string): CpuLimit {
  return { request: cores(r?.requests?.cpu) ?? 0.1, limit: cores(r?.limits?.cpu), cpus };
}

interface Deployment {
  concurrency?: number;
  resources?: Resources;
}
const VALUES = 'charts/smarter-worker/values.yaml';
const chartValues = (valuesFile: string) =>
  yaml.load(fs.readFileSync(valuesFile, 'utf8')) as { worker?: Deployment; workerInfrastructure?: Deployment };

/** The two worker deployments' `-c`, as the chart runs them (Celery's CPU count where a value is absent). */
export function chartConcurrency(valuesFile = VALUES): Record<'ops' | 'infra', number> {
  const values = chartValues(valuesFile);
  return {
    ops: values.worker?.concurrency ?? os.availableParallelism(),
    infra: values.workerInfrastructure?.concurrency ?? os.availableParallelism(),
  };
}

export function chartGroups(
  prefix: string,
  valuesFile = VALUES,
): { ops: CpuGroup; infra: CpuGroup; limits: Record<'ops' | 'infra', CpuLimit>; remove(): void } {
  const values = chartValues(valuesFile);
  const limits = {
    ops: limitOf(values.worker?.resources, '1'),
    infra: limitOf(values.workerInfrastructure?.resources, '1'),
  };
  const ops = cpuGroup(`${prefix}-ops`, limits.ops);
  const infra = cpuGroup(`${prefix}-infra`, limits.infra);
  return {
    ops,
    infra,
    limits,
    remove() {
      ops.remove();
      infra.remove();
    },
  };
}
