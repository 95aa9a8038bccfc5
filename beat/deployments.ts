/**
 * Which queues the worker deployments consume, read from the Helm chart's values and from compose.yaml, so
 * that the contract check can tell a Beat entry that sends to a queue nobody consumes.
 */
import { existsSync, readFileSync } from 'node:fs';
import yaml from 'js-yaml';

/** Source (e.g. "helm charts/smarter-worker") → queue → the deployments that consume it. */
export type Consumers = Map<string, Map<string, string[]>>;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function add(m: Map<string, string[]>, queues: string, who: string): void {
  for (const q of queues
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    m.set(q, [...(m.get(q) ?? []), who]);
  }
}

/** The chart's two worker Deployments consume `queues.operational` and `queues.infrastructure`. */
export function helmConsumers(chartDir: string): Map<string, string[]> | null {
  const file = `${chartDir}/values.yaml`;
  if (!existsSync(file)) return null;
  const v = yaml.load(readFileSync(file, 'utf8'));
  const out = new Map<string, string[]>();
  if (!isRecord(v) || !isRecord(v.queues)) return out;
  const enabled = (k: string) => !isRecord(v[k]) || v[k].enabled !== false;
  if (typeof v.queues.operational === 'string' && enabled('worker')) {
    add(out, v.queues.operational, 'deployment worker');
  }
  if (typeof v.queues.infrastructure === 'string' && enabled('workerInfrastructure')) {
    add(out, v.queues.infrastructure, 'deployment worker-infrastructure');
  }
  return out;
}

/** Services of compose.yaml that run the worker, and the queues of their `-Q`. */
export function composeConsumers(file: string): Map<string, string[]> | null {
  if (!existsSync(file)) return null;
  const doc = yaml.load(readFileSync(file, 'utf8'));
  const out = new Map<string, string[]>();
  if (!isRecord(doc) || !isRecord(doc.services)) return out;
  for (const [name, svc] of Object.entries(doc.services)) {
    if (!isRecord(svc)) continue;
    const cmd = Array.isArray(svc.command)
      ? svc.command.map(String)
      : typeof svc.command === 'string'
        ? svc.command.split(/\s+/)
        : [];
    if (!cmd.some((c) => c.endsWith('tasks/main.js') || c === 'smarter-worker')) continue;
    cmd.forEach((c, i) => {
      const next = cmd[i + 1];
      if ((c === '-Q' || c === '--queues') && next) add(out, next, `service ${name}`);
      else if (c.startsWith('--queues=')) add(out, c.slice(9), `service ${name}`);
    });
  }
  return out;
}

export function deploymentConsumers(root = '.'): Consumers {
  const out: Consumers = new Map();
  const helm = helmConsumers(`${root}/charts/smarter-worker`);
  if (helm) out.set('helm charts/smarter-worker', helm);
  const compose = composeConsumers(`${root}/compose.yaml`);
  if (compose) out.set('compose.yaml', compose);
  return out;
}
