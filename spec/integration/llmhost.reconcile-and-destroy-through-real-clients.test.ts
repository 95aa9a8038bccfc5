/**
 * The llmhost infrastructure tasks through the real clients: moto for EKS and Route 53, the Kubernetes stand-in,
 * MariaDB; each re-queue (positional, as Smarter's) planned by the worker's own rule and run in-process. This file:
 * the compute's node group reconciled and scaled down, destroy_llmhost and its ledger rows.
 */
import { llmclientTasks } from '../../tasks/llmclient/index.js';
import { llmhostTasks } from '../../tasks/llmhost/index.js';
import { InfrastructureLedger } from '../../tasks/infrastructure/ledger.js';
import { withLedger } from '../../tasks/cloud/recording-kubernetes.js';
import { CheckRunner } from '../support/check-runner.js';
import { recordingLogger } from '../support/logs.js';
import { API, type LlmhostWorld, NS, llmhostWorldForFile } from '../support/llmhost-world.js';
import { DESTROY, DESTROY_A, GPU_SPEC, LAUNCH, RECONCILE, RECONCILE_ALL } from '../support/llmhost-task-runs.js';
import { llmhostTaskRuns, steps } from '../support/llmhost-task-runs.js';

let w: LlmhostWorld;
llmhostWorldForFile((world) => (w = world));
const { runner, host, computeRow, events, nodegroup, obj, gpuNodegroup } = llmhostTaskRuns(() => w);

/** An LLMHost on a GPU compute of its own, launched: what `r` has queued next is the compute's first reconcile. */
async function launched(compute: string, name: string) {
  const computeId = await w.newCompute({ name: compute });
  const id = await w.newLlmhost({ name, spec: { ...GPU_SPEC, compute } });
  const r = runner();
  r.send(LAUNCH, {}, [id]);
  await steps(r, 1);
  return { computeId, id, r };
}

test('own wiring: reconcile_llmhost_compute re-queues (compute_id, attempt + 1) every 30 s until its node joins, then is settled: ready_nodes 1, the LLMHost active, nothing more queued', async () => {
  const { computeId, id, r } = await launched('gpu-l4-settle', 'settle');
  const base = `llmhost-${id}-settle`;
  const runs = await r.drain((msg, done) => {
    // The node joins while the third reconcile is queued; the Deployment reports its pod ready.
    if (msg.name === RECONCILE && done.filter((d) => d.name === RECONCILE).length === 2) {
      w.joinNode('gpu-l4-settle', `node-settle-${id}`);
      w.deploymentReady(base, 1);
    }
  });
  const reconciles = runs.filter((x) => x.name === RECONCILE);
  expect(reconciles.map((x) => x.args)).toEqual([[computeId], [computeId, 2], [computeId, 3]]);
  expect(reconciles.every((x) => x.countdown === 30 && x.error === undefined)).toBe(true);
  expect(reconciles[2]?.result).toMatchObject({
    nodegroup_status: 'ACTIVE',
    needed: 1,
    desired: 1,
    ready: 1,
    nodes: 1,
    actions: [],
    message: '1 of 1 nodes ready, for 1 needed.',
  });
  expect(r.pending).toEqual([]);
  expect(await computeRow(computeId)).toMatchObject({ nodegroup_status: 'ACTIVE', desired_nodes: 1, ready_nodes: 1 });
  expect((await host(id))?.status).toBe('active');
  expect(await events(id)).toContain('status_changed:active');
});

test('own wiring: reconcile_llmhost_compute gives up quietly after RECONCILE_MAX_ATTEMPTS = 60 runs when no node ever joins: attempts 1..60, no FAILURE, nothing queued after the 60th', async () => {
  const { computeId, id, r } = await launched('gpu-l4-never', 'never');
  const runs = await steps(r, 100);
  expect(runs.every((x) => x.name === RECONCILE && x.args[0] === computeId)).toBe(true);
  expect(runs.map((x) => x.args[1] ?? 1)).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
  expect(runs.every((x) => x.error === undefined)).toBe(true);
  expect(runs[59]?.result).toMatchObject({
    needed: 1,
    desired: 1,
    ready: 0,
    message: 'Waiting for 1 g6.2xlarge nodes to join the cluster.',
  });
  expect(r.pending).toEqual([]);
  expect((await host(id))?.status).toBe('provisioning');
});

test('own wiring: destroy_llmhost deletes Deployment, Service, Ingress and Secrets but keeps the model volume, queues destroy_domain_A_record(hostname=, api_host_domain=) and a reconcile that removes the idle node', async () => {
  const { computeId, id, r } = await launched('gpu-l4-destroy', 'gone');
  const group = `eks-destroy-${id}`;
  const [instance] = await w.launchInstances(group, 1);
  w.joinNode('gpu-l4-destroy', `node-destroy-${id}`, true, instance);
  r.pending.length = 0;
  const base = `llmhost-${id}-gone`;
  const hostname = `${base}.${w.accountNumber}.${API}`;
  r.send(DESTROY, {}, [id]);
  const [run] = await steps(r, 1);
  expect(run?.result).toBe('inactive');
  for (const [kind, v, name] of [
    ['Deployment', 'apps/v1', base],
    ['Service', 'v1', base],
    ['Ingress', 'networking.k8s.io/v1', base],
    ['Secret', 'v1', base],
  ] as const) {
    expect(obj(kind, v, name)).toBeUndefined();
  }
  expect(obj('PersistentVolumeClaim', 'v1', `${base}-models`)).toBeDefined();
  expect(await host(id)).toMatchObject({
    status: 'inactive',
    status_message: 'Destroyed. The model volume was kept.',
    ready_replicas: 0,
  });
  expect(await events(id)).toEqual(expect.arrayContaining(['destroyed:inactive', 'nodes_scaled:inactive']));
  // release_compute removed the idle node at once, terminating its own instance in its Auto Scaling group.
  expect(await w.autoScalingGroup(group)).toEqual({ desired: 0, instances: [] });
  expect(await computeRow(computeId)).toMatchObject({ desired_nodes: 0 });
  expect(r.pending).toEqual([
    expect.objectContaining({ name: DESTROY_A, args: [], kwargs: { hostname, api_host_domain: API } }),
    expect.objectContaining({ name: RECONCILE, args: [computeId], countdown: 30 }),
  ]);
  await steps(r, 1);
  const zone = await w.cloud.route53.findZone(API);
  expect(await w.cloud.route53.getRecord(zone?.id ?? '', hostname, 'A')).toBeNull();
});

// Smarter: smarter/apps/llmhost/services/compute.py (ComputeProvisioner.reconcile) and nodegroups.py (remove_node).
test("own wiring: scale-down terminates the idle node's own instance in its Auto Scaling group (desired capacity decremented), never the node an LLMHost's pod runs on", async () => {
  const computeId = await w.newCompute({ name: 'gpu-l4-shrink' });
  const id = await w.newLlmhost({
    name: 'shrink',
    spec: { ...GPU_SPEC, compute: 'gpu-l4-shrink' },
    computeId,
    status: 'active',
  });
  const ngName = `smarter-alpha-${computeId}-gpu-l4-shrink`;
  // The node group had two nodes; its one LLMHost needs one, and its pod runs on the first node to have joined.
  await gpuNodegroup(ngName, 2);
  const group = `eks-${ngName}`;
  const [busy = '', idle = ''] = await w.launchInstances(group, 2);
  w.joinNode('gpu-l4-shrink', `node-busy-${id}`, true, busy);
  w.joinNode('gpu-l4-shrink', `node-idle-${id}`, true, idle);
  w.kube.put(
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: `llmhost-${id}-shrink-abc12`,
        namespace: NS,
        labels: { 'smarter.sh/compute': 'gpu-l4-shrink' },
      },
      spec: { nodeName: `node-busy-${id}`, containers: [{ name: 'vllm', image: 'vllm/vllm-openai' }] },
    },
    'kube-scheduler',
  );
  const r = runner();
  r.send(RECONCILE, {}, [computeId]);
  const [run] = await steps(r, 1);
  expect(run?.error).toBeUndefined();
  expect(run?.result).toMatchObject({ needed: 1, desired: 1, actions: [`removed idle node node-idle-${id}`] });
  expect(await w.autoScalingGroup(group)).toEqual({ desired: 1, instances: [busy] });
  expect(await computeRow(computeId)).toMatchObject({ desired_nodes: 1 });
});

test("own wiring: a node whose providerID names no EC2 instance is not removed: reconcile_llmhost_computes reports Smarter's LLMHostComputeError for its compute", async () => {
  const computeId = await w.newCompute({ name: 'gpu-l4-badid' });
  const ngName = `smarter-alpha-${computeId}-gpu-l4-badid`;
  await gpuNodegroup(ngName, 1);
  w.kube.put(
    {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: `node-kind-${computeId}`, labels: { 'smarter.sh/compute': 'gpu-l4-badid' } },
      spec: { providerID: 'kind://docker/kind/kind-worker' },
      status: { conditions: [{ type: 'Ready', status: 'True' }] },
    },
    'kubelet',
  );
  await w.t.db.execute('UPDATE llmhost_llmhostcompute SET desired_nodes = 1 WHERE id = ?', [computeId]);
  const r = runner();
  r.send(RECONCILE_ALL);
  const result = (await steps(r, 1))[0]?.result as Record<string, string>;
  expect(result['gpu-l4-badid']).toBe('kind://docker/kind/kind-worker is not the providerID of an EC2 instance.');
});

test('own wiring: destroy_llmhost with purge=True deletes the model volume too', async () => {
  await w.newCompute({ name: 'gpu-l4-purge' });
  const id = await w.newLlmhost({ name: 'purged', spec: { ...GPU_SPEC, compute: 'gpu-l4-purge' } });
  const r = runner();
  r.send(LAUNCH, {}, [id]);
  await steps(r, 1);
  r.pending.length = 0;
  r.send(DESTROY, { purge: true }, [id]);
  await steps(r, 1);
  expect(obj('PersistentVolumeClaim', 'v1', `llmhost-${id}-purged-models`)).toBeUndefined();
  expect((await host(id))?.status_message).toBe('Destroyed.');
});

// Smarter: smarter/apps/infrastructure/services/kubernetes.py (apply_manifest records billable_resources, delete_resource each deletion).
test("own wiring: the ledger through Smarter's KubernetesService: launch records the LLMHost's model volume (billable), destroy with purge records each resource it deletes and closes the volume's row", async () => {
  await w.newCompute({ name: 'gpu-l4-ledger' });
  const id = await w.newLlmhost({ name: 'ledgered', spec: { ...GPU_SPEC, compute: 'gpu-l4-ledger' } });
  const base = `llmhost-${id}-ledgered`;
  const deps = { db: w.t.db, cloud: withLedger(w.cloud, new InfrastructureLedger(w.t.db, recordingLogger())) };
  const r = new CheckRunner([...llmhostTasks(w.env), ...llmclientTasks(w.env)], deps) as CheckRunner<unknown>;
  const rows = async () =>
    (
      await w.t.db.select(
        "SELECT resource_type, resource_name, billable, status FROM infrastructure_infrastructureresource WHERE resource_type LIKE 'kubernetes.%' AND resource_name LIKE ? ORDER BY id",
        [`${base}%`],
      )
    ).map(
      (row) =>
        `${String(row.resource_type)} ${String(row.resource_name)} ${Number(row.billable)} ${String(row.status)}`,
    );
  r.send(LAUNCH, {}, [id]);
  expect((await steps(r, 1))[0]?.error).toBeUndefined();
  // Only what a cloud bills is recorded on apply: not the Deployment, Service, Ingress or Secret.
  expect(await rows()).toEqual([`kubernetes.persistentvolumeclaim ${base}-models 1 active`]);
  r.pending.length = 0;
  r.send(DESTROY, { purge: true }, [id]);
  expect((await steps(r, 1))[0]?.error).toBeUndefined();
  expect(await rows()).toEqual([
    `kubernetes.persistentvolumeclaim ${base}-models 1 destroyed`,
    `kubernetes.deployment ${base} 0 destroyed`,
    `kubernetes.service ${base} 0 destroyed`,
    `kubernetes.ingress ${base} 0 destroyed`,
    `kubernetes.secret ${base} 0 destroyed`,
    // cert-manager's TLS Secret: deleted by name, recorded whether or not it was there (--ignore-not-found).
    `kubernetes.secret ${base}-tls 0 destroyed`,
  ]);
});

// Smarter: smarter/apps/llmhost/services/service.py (destroy) and models/llmhost.py (uptime_hours, estimated_cost).
test("own wiring: destroy_llmhost's destroyed event carries purge, uptimeHours and estimatedCost as of the moment before it stops", async () => {
  const id = await w.newLlmhost({ name: 'costly', spec: { resources: { cpu: '1', memory: '2Gi' } }, status: 'active' });
  await w.t.db.execute(
    "UPDATE llmhost_llmhost SET deployed_at = UTC_TIMESTAMP(6) - INTERVAL 10 HOUR, replicas = 2, cost_per_hour = '1.2120' WHERE id = ?",
    [id],
  );
  const never = await w.newLlmhost({ name: 'never_launched', spec: {}, status: 'inactive' });
  const r = runner();
  r.send(DESTROY, {}, [id]);
  r.send(DESTROY, { purge: true }, [never]);
  await steps(r, 2);
  const details = async (llmhostId: number) =>
    (
      await w.t.db.select(
        "SELECT details FROM llmhost_llmhostevent WHERE llmhost_id = ? AND event_type = 'destroyed'",
        [llmhostId],
      )
    ).map((e) => JSON.parse(String(e.details)) as unknown);
  expect(await details(id)).toEqual([{ purge: false, uptimeHours: 10, estimatedCost: '24.2400' }]);
  expect(await details(never)).toEqual([{ purge: true, uptimeHours: null, estimatedCost: null }]);
});

test('own wiring: reconcile_llmhost_computes reconciles every compute with nodes or deployed LLMHosts: {name: message}', async () => {
  const computeId = await w.newCompute({ name: 'cpu-all', gpuCount: 0, gpuMemoryGb: 0, cpu: 4, memoryGb: 16 });
  await w.newLlmhost({
    name: 'all_a',
    spec: {
      model: { source: 'ollama', repository: 'llama3.2:1b' },
      engine: { name: 'ollama' },
      resources: { cpu: '1', memory: '2Gi' },
      storage: { accessMode: 'ReadWriteMany' },
      scaling: { replicas: 2 },
    },
    computeId,
    status: 'active',
  });
  const r = runner();
  r.send(RECONCILE_ALL);
  const result = (await steps(r, 1))[0]?.result as Record<string, string>;
  // Two small replicas pack onto one node, which the node group is created with.
  expect(result['cpu-all']).toBe('Waiting for 1 g6.2xlarge nodes to join the cluster.');
  expect((await nodegroup(`smarter-alpha-${computeId}-cpu-all`))?.taints).toEqual([
    { key: 'smarter.sh/compute', value: 'cpu-all', effect: 'NO_SCHEDULE' },
  ]);
});
