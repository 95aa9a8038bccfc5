/**
 * What the chart starts, as `helm template` renders it: each Deployment's command, arguments and environment, with
 * the `secretKeyRef`s and `envFrom` Secrets resolved from Secrets the test provides, as the kubelet resolves them.
 * A test that starts the shipped binaries with this environment runs what the chart deploys, so the two cannot drift.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { CHART } from './chart.js';
import { helm } from './helm.js';

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string } };
}

interface Container {
  name: string;
  command?: string[];
  args?: string[];
  env?: EnvVar[];
  envFrom?: Array<{ secretRef?: { name: string } }>;
}

export interface RenderedContainer {
  /** The Deployment's name (`<release>-worker`, `<release>-worker-infrastructure`, `<release>-beat`). */
  deployment: string;
  command: string[];
  args: string[];
  env: EnvVar[];
  /** Names of the Secrets the container takes whole (`envFrom`). */
  envFrom: string[];
}

/** Secrets of the namespace: name → key → value. */
export type Secrets = Record<string, Record<string, string>>;

/** Renders the chart with `values` (merged over values.yaml by helm) and returns each Deployment's first container. */
export function renderDeployments(
  values: Record<string, unknown>,
  release = 'smarter',
): Map<string, RenderedContainer> {
  const dir = mkdtempSync(join(tmpdir(), 'chart-env-'));
  try {
    const file = join(dir, 'values.yaml');
    writeFileSync(file, yaml.dump(values));
    const out = helm(['template', release, CHART, '-f', file]);
    const rendered = new Map<string, RenderedContainer>();
    for (const doc of yaml.loadAll(out)) {
      const d = doc as {
        kind?: string;
        metadata?: { name?: string };
        spec?: { template?: { spec?: { containers?: Container[] } } };
      } | null;
      if (d?.kind !== 'Deployment') continue;
      const c = d.spec?.template?.spec?.containers?.[0];
      const name = d.metadata?.name ?? '';
      if (!c) throw new Error(`Deployment ${name} renders no container`);
      rendered.set(name, {
        deployment: name,
        command: c.command ?? [],
        args: (c.args ?? []).map(String),
        env: c.env ?? [],
        envFrom: (c.envFrom ?? []).flatMap((f) => (f.secretRef ? [f.secretRef.name] : [])),
      });
    }
    return rendered;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The container's environment as the kubelet builds it: `envFrom` Secrets first, then `env` in order (a later entry
 * wins), each `secretKeyRef` read from `secrets`. A Secret or key the test did not provide throws, as a pod that
 * refers to a missing Secret does not start.
 */
export function containerEnv(c: RenderedContainer, secrets: Secrets): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of c.envFrom) {
    const s = secrets[name];
    if (!s) throw new Error(`${c.deployment}: envFrom Secret ${name} is not provided`);
    Object.assign(env, s);
  }
  for (const e of c.env) {
    const ref = e.valueFrom?.secretKeyRef;
    if (ref) {
      const v = secrets[ref.name]?.[ref.key];
      if (v === undefined) {
        throw new Error(`${c.deployment}: env ${e.name} refers to Secret ${ref.name} key ${ref.key}, not provided`);
      }
      env[e.name] = v;
    } else {
      env[e.name] = e.value ?? '';
    }
  }
  return env;
}

/** The program and arguments after the image's init (`/usr/bin/tini --`): `node <script> <args…>`. */
export function nodeCommand(c: RenderedContainer): { script: string; args: string[] } {
  const i = c.command.indexOf('node');
  const script = c.command[i + 1];
  if (i < 0 || script === undefined) {
    throw new Error(`${c.deployment}: command ${JSON.stringify(c.command)} runs no node script`);
  }
  return { script, args: [...c.command.slice(i + 2), ...c.args] };
}
