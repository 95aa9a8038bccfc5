/**
 * What the llmhost task tests (spec/integration/llmhost.*-through-real-clients.test.ts) share: Smarter's task names,
 * a GPU spec, a runner of the llmhost, llmclient and infrastructure tasks on the file's world, and readers of the rows
 * and Kubernetes objects those tasks write.
 */
import { DescribeNodegroupCommand } from '@aws-sdk/client-eks';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { infrastructureTasks } from '../../tasks/infrastructure/index.js';
import { llmclientTasks } from '../../tasks/llmclient/index.js';
import { llmhostTasks } from '../../tasks/llmhost/index.js';
import { CheckRunner } from './check-runner.js';
import { type LlmhostWorld, CLUSTER, NS, PLATFORM_ROLE, PLATFORM_SUBNETS } from './llmhost-world.js';
import { freePort } from './moto.js';

export const LAUNCH = 'smarter.apps.llmhost.tasks.launch_llmhost';
export const DESTROY = 'smarter.apps.llmhost.tasks.destroy_llmhost';
export const REFRESH = 'smarter.apps.llmhost.tasks.refresh_llmhost_status';
export const RECONCILE = 'smarter.apps.llmhost.tasks.reconcile_llmhost_compute';
export const RECONCILE_ALL = 'smarter.apps.llmhost.tasks.reconcile_llmhost_computes';
export const DESTROY_A = 'smarter.apps.llmclient.tasks.destroy_domain_a_record.destroy_domain_A_record';

export const GPU_SPEC = {
  engine: { name: 'vllm' },
  model: { repository: 'meta-llama/Llama-3.1-8B-Instruct' },
  resources: { cpu: '4', memory: '16Gi', gpuCount: 1 },
  network: { ingress: true },
};

/** Runs the next `n` queued messages, leaving the rest queued. */
export async function steps(
  r: CheckRunner<unknown>,
  n: number,
): Promise<Awaited<ReturnType<CheckRunner<unknown>['runOne']>>[]> {
  const out = [];
  for (let i = 0; i < n; i++) {
    const msg = r.pending.shift();
    if (!msg) break;
    out.push(await r.runOne(msg));
  }
  return out;
}

/** The runner and the readers of one test file, on the world its `llmhostWorldForFile` started. */
export function llmhostTaskRuns(world: () => LlmhostWorld) {
  const runner = (): CheckRunner<unknown> =>
    new CheckRunner(
      [...llmhostTasks(world().env), ...llmclientTasks(world().env), ...infrastructureTasks(world().env)],
      world().deps,
    );
  const host = async (id: number) =>
    (
      await world().t.db.select(
        'SELECT status, status_message, endpoint_url, public_url, health_check_url, replicas, ready_replicas, deployed_at, compute_id FROM llmhost_llmhost WHERE id = ?',
        [id],
      )
    )[0];
  const computeRow = async (id: number) =>
    (
      await world().t.db.select(
        'SELECT nodegroup_status, desired_nodes, ready_nodes, status_message, last_reconciled_at FROM llmhost_llmhostcompute WHERE id = ?',
        [id],
      )
    )[0];
  const events = async (id: number) =>
    (
      await world().t.db.select(
        'SELECT event_type, status, message FROM llmhost_llmhostevent WHERE llmhost_id = ? ORDER BY id',
        [id],
      )
    ).map((e) => `${String(e.event_type)}:${String(e.status)}`);
  const nodegroup = async (name: string) =>
    (await world().eks.send(new DescribeNodegroupCommand({ clusterName: CLUSTER, nodegroupName: name }))).nodegroup;
  const obj = (kind: string, apiVersion: string, name: string) =>
    world().kube.object({ apiVersion, kind, name, namespace: NS });
  const secretData = (base: string) => {
    const data = (obj('Secret', 'v1', base)?.data ?? {}) as Record<string, string>;
    return Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
  };
  const secretRow = async (id: number) =>
    (
      await world().t.db.select(
        'SELECT id, name, description, version, annotations, user_profile_id, last_accessed, encrypted_value FROM secret_secret WHERE id = ?',
        [id],
      )
    )[0];
  /** A GPU compute's node group as a launch made it earlier (g6.2xlarge, up to 4 nodes, no labels or taints). */
  const gpuNodegroup = (name: string, desired: number) =>
    world().cloud.eks.createNodegroup(CLUSTER, {
      name,
      desired,
      max: 4,
      instanceType: 'g6.2xlarge',
      diskSizeGb: 100,
      amiType: 'AL2023_x86_64_NVIDIA',
      capacityType: 'ON_DEMAND',
      nodeRole: PLATFORM_ROLE,
      subnets: PLATFORM_SUBNETS,
      labels: {},
      taints: [],
      tags: {},
    });
  return { runner, host, computeRow, events, nodegroup, obj, secretData, secretRow, gpuNodegroup };
}

/** The spec of a Deployment another controller made, complete enough for the API server (one replica). */
export const deploymentSpec = (app: string) => ({
  replicas: 1,
  selector: { matchLabels: { app } },
  template: { metadata: { labels: { app } }, spec: { containers: [{ name: 'vllm', image: 'vllm/vllm-openai' }] } },
});

/** Runs `fn` with KUBECONFIG pointing at a port nothing listens on: a Kubernetes API that does not answer. */
export async function withKubeDown(fn: () => Promise<void>): Promise<void> {
  const closed = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'kube-down-'));
  const kubeconfig = join(dir, 'config');
  writeFileSync(
    kubeconfig,
    `apiVersion: v1\nkind: Config\nclusters: [{name: down, cluster: {server: "https://127.0.0.1:${closed}", insecure-skip-tls-verify: true}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: down, context: {cluster: down, user: u}}]\ncurrent-context: down\n`,
  );
  const saved = process.env.KUBECONFIG;
  process.env.KUBECONFIG = kubeconfig;
  try {
    await fn();
  } finally {
    process.env.KUBECONFIG = saved;
    rmSync(dir, { recursive: true, force: true });
  }
}
