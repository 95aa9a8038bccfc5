/**
 * charts/smarter-worker as real helm renders it (spec/support/helm.ts): the objects of `helm template` for given
 * values, and each deployment's container as the kubelet would start it, so that tests which start the worker
 * start it with the chart's own command line and environment.
 *
 *   const objects = renderChart({ keda: { enabled: true } });
 *   const worker = chartEnv({}, 'worker');          // { command, args, env, envFrom } of the container
 *   const { argv, env } = containerProcess(worker, { 'smarter-celery': { CELERY_BROKER_URL: 'amqp://…' } });
 *
 * Also the PromQL of the chart's files/ (alerts, dashboard), read as they are.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import yaml from 'js-yaml';
import { helm } from './helm.js';

export const CHART = 'charts/smarter-worker';
export const RELEASE = 'smarter';
export const NAMESPACE = 'smarter';

/** Values merged over values.yaml by helm itself (maps deeply, lists and scalars replaced, null deletes a key). */
export type ChartValues = Record<string, unknown>;

export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    secretKeyRef?: { name: string; key: string; optional?: boolean };
    configMapKeyRef?: { name: string; key: string; optional?: boolean };
    fieldRef?: { fieldPath: string };
  };
}

export interface EnvFromSource {
  prefix?: string;
  secretRef?: { name: string; optional?: boolean };
  configMapRef?: { name: string; optional?: boolean };
}

export interface ChartContainer {
  /** The Deployment it belongs to (`smarter-worker`, …) and the container's name. */
  deployment: string;
  name: string;
  command: string[];
  args: string[];
  env: EnvVar[];
  envFrom: EnvFromSource[];
}

/** The chart's three Deployments, by the suffix of their names. */
export type ChartDeployment = 'worker' | 'worker-infrastructure' | 'beat';

/** Runs helm with `values` in a file of their own (JSON is YAML), as `--values <file>`. */
function withValues(values: ChartValues, args: (file: string) => string[]): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'chart-values-'));
  try {
    const file = path.join(dir, 'values.yaml');
    writeFileSync(file, JSON.stringify(values));
    return helm(args(file));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `helm template` of the chart with `values` over values.yaml: every object it renders, in order. */
export function renderChart(values: ChartValues = {}, o: { release?: string; namespace?: string } = {}): Manifest[] {
  const out = withValues(values, (file) => [
    'template',
    o.release ?? RELEASE,
    CHART,
    '--namespace',
    o.namespace ?? NAMESPACE,
    '--values',
    file,
  ]);
  return yaml.loadAll(out).filter((d): d is Manifest => d !== null && typeof d === 'object');
}

/** `helm lint --strict` of the chart with `values`: helm's report, or a throw with it when the chart fails. */
export function lintChart(values: ChartValues = {}): string {
  return withValues(values, (file) => ['lint', '--strict', CHART, '--values', file]);
}

/** The container of one of the chart's Deployments as rendered for `values`; throws if the chart renders none. */
export function chartEnv(
  values: ChartValues,
  deployment: ChartDeployment,
  o: { release?: string; namespace?: string } = {},
): ChartContainer {
  const name = `${o.release ?? RELEASE}-${deployment}`;
  const objects = renderChart(values, o);
  const d = objects.find((x) => x.kind === 'Deployment' && x.metadata.name === name);
  if (!d) throw new Error(`the chart renders no Deployment ${name} for these values`);
  const spec = d.spec as { template: { spec: { containers: Array<Record<string, unknown>> } } };
  const c = spec.template.spec.containers[0];
  if (!c) throw new Error(`Deployment ${name} has no container`);
  return {
    deployment: name,
    name: String(c.name),
    command: (c.command ?? []) as string[],
    args: (c.args ?? []) as string[],
    env: (c.env ?? []) as EnvVar[],
    envFrom: (c.envFrom ?? []) as EnvFromSource[],
  };
}

/** Kubernetes' `$(VAR)` expansion of env values, command and args: defined names only, `$$` escapes. */
function expand(text: string, env: Record<string, string>): string {
  return text.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)/g, (m, name: string | undefined) =>
    name === undefined ? '$' : (env[name] ?? m),
  );
}

/**
 * The process the kubelet starts for `container`: its argv after the init (`tini --`) and the environment
 * resolved as the kubelet resolves it (envFrom first, then env in order, `$(VAR)` expanded, secretKeyRef and
 * configMapKeyRef read from `sources`: name → key → value). A reference to a missing Secret or key that is not
 * optional throws, as the pod would not start (CreateContainerConfigError).
 */
export function containerProcess(
  container: ChartContainer,
  sources: Record<string, Record<string, string>>,
): { argv: string[]; env: Record<string, string> } {
  const env: Record<string, string> = {};
  const read = (ref: { name: string; key: string; optional?: boolean }, what: string): string | undefined => {
    const v = sources[ref.name]?.[ref.key];
    if (v === undefined && !ref.optional) {
      throw new Error(
        `${container.deployment}: ${what} ${ref.name} has no key ${ref.key} (CreateContainerConfigError)`,
      );
    }
    return v;
  };
  for (const from of container.envFrom) {
    const ref = from.secretRef ?? from.configMapRef;
    if (!ref) continue;
    const data = sources[ref.name];
    if (!data) {
      if (ref.optional) continue;
      throw new Error(`${container.deployment}: envFrom ${ref.name} does not exist (CreateContainerConfigError)`);
    }
    for (const [k, v] of Object.entries(data)) env[`${from.prefix ?? ''}${k}`] = v;
  }
  for (const e of container.env) {
    let v: string | undefined;
    if (e.valueFrom?.secretKeyRef) v = read(e.valueFrom.secretKeyRef, 'Secret');
    else if (e.valueFrom?.configMapKeyRef) v = read(e.valueFrom.configMapKeyRef, 'ConfigMap');
    else if (e.valueFrom) throw new Error(`${container.deployment}: env ${e.name}: only secret and config map refs`);
    else v = expand(e.value ?? '', env);
    if (v !== undefined) env[e.name] = v;
  }
  const full = [...container.command, ...container.args].map((a) => expand(a, env));
  const dashes = full.indexOf('--');
  const argv = full[0]?.endsWith('/tini') && dashes >= 0 ? full.slice(dashes + 1) : full;
  return { argv, env };
}

interface Panel {
  title: string;
  targets?: Array<{ expr: string }>;
}

/** The PromQL of every panel of the chart's dashboard. */
export function dashboardQueries(): Array<{ panel: string; expr: string }> {
  const d = JSON.parse(readFileSync(`${CHART}/files/dashboard.json`, 'utf8')) as { panels: Panel[] };
  return d.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })));
}

/** The expression of every rule of the chart's alerts. */
export function alertExpressions(): Array<{ alert: string; expr: string }> {
  const r = yaml.load(readFileSync(`${CHART}/files/alerts.yaml`, 'utf8')) as {
    groups: Array<{ rules: Array<{ alert?: string; record?: string; expr: string }> }>;
  };
  return r.groups.flatMap((g) => g.rules.map((x) => ({ alert: x.alert ?? x.record ?? '', expr: x.expr })));
}

/** The smarter_* metric names a PromQL expression reads. */
export function metricNames(expr: string): string[] {
  return [...new Set(expr.match(/\bsmarter_[a-z0-9_]+/g) ?? [])];
}
