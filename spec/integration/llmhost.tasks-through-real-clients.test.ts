/**
 * The llmhost infrastructure tasks through the real clients: moto for EKS and Route 53, the Kubernetes stand-in,
 * MariaDB; each re-queue (positional, as Smarter's) planned by the worker's own rule and run in-process.
 */
import { DescribeNodegroupCommand } from '@aws-sdk/client-eks';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { infrastructureTasks } from '../../tasks/infrastructure/index.js';
import { llmclientTasks } from '../../tasks/llmclient/index.js';
import { llmhostTasks } from '../../tasks/llmhost/index.js';
import { InfrastructureLedger } from '../../tasks/infrastructure/ledger.js';
import { withLedger } from '../../tasks/cloud/recording-kubernetes.js';
import { LLAMA_3_1_8B_INSTRUCT } from '../fixtures/llmhost-builtins.js';
import { CheckRunner } from '../support/check-runner.js';
import { testCloud } from '../support/cloud.js';
import { type LogLine, recordingLogger } from '../support/logs.js';
import { freePort } from '../support/moto.js';
import { fernetDecryptPython, insertSecret } from '../support/secrets.js';
import { recordLocator } from '../../tasks/db/django.js';
import { insertRow } from '../support/django-rows.js';
import {
  API,
  CLUSTER,
  type LlmhostWorld,
  NS,
  PLATFORM_ROLE,
  PLATFORM_SUBNETS,
  llmhostWorldForFile,
} from '../support/llmhost-world.js';

const LAUNCH = 'smarter.apps.llmhost.tasks.launch_llmhost';
const DESTROY = 'smarter.apps.llmhost.tasks.destroy_llmhost';
const REFRESH = 'smarter.apps.llmhost.tasks.refresh_llmhost_status';
const RECONCILE = 'smarter.apps.llmhost.tasks.reconcile_llmhost_compute';
const RECONCILE_ALL = 'smarter.apps.llmhost.tasks.reconcile_llmhost_computes';
const DESTROY_A = 'smarter.apps.llmclient.tasks.destroy_domain_a_record.destroy_domain_A_record';

let w: LlmhostWorld;
/** Runs the next `n` queued messages, leaving the rest queued. */
async function steps(
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
const runner = (): CheckRunner<unknown> =>
  new CheckRunner([...llmhostTasks(w.env), ...llmclientTasks(w.env), ...infrastructureTasks(w.env)], w.deps);

llmhostWorldForFile((world) => (w = world));

const GPU_SPEC = {
  engine: { name: 'vllm' },
  model: { repository: 'meta-llama/Llama-3.1-8B-Instruct' },
  resources: { cpu: '4', memory: '16Gi', gpuCount: 1 },
  network: { ingress: true },
};

const host = async (id: number) =>
  (
    await w.t.db.select(
      'SELECT status, status_message, endpoint_url, public_url, health_check_url, replicas, ready_replicas, deployed_at, compute_id FROM llmhost_llmhost WHERE id = ?',
      [id],
    )
  )[0];
const computeRow = async (id: number) =>
  (
    await w.t.db.select(
      'SELECT nodegroup_status, desired_nodes, ready_nodes, status_message, last_reconciled_at FROM llmhost_llmhostcompute WHERE id = ?',
      [id],
    )
  )[0];
const events = async (id: number) =>
  (
    await w.t.db.select(
      'SELECT event_type, status, message FROM llmhost_llmhostevent WHERE llmhost_id = ? ORDER BY id',
      [id],
    )
  ).map((e) => `${String(e.event_type)}:${String(e.status)}`);
const nodegroup = async (name: string) =>
  (await w.eks.send(new DescribeNodegroupCommand({ clusterName: CLUSTER, nodegroupName: name }))).nodegroup;
const obj = (kind: string, apiVersion: string, name: string) =>
  w.kube.object({ apiVersion, kind, name, namespace: NS });

test("own wiring: launch_llmhost applies PVC, Secret, Deployment, Service and Ingress, creates the compute's EKS node group and the DNS A record, and queues reconcile_llmhost_compute((compute_id,), countdown=30)", async () => {
  const computeId = await w.newCompute({ name: 'gpu-l4-launch' });
  const id = await w.newLlmhost({ name: 'llama', spec: { ...GPU_SPEC, compute: 'gpu-l4-launch' } });
  const r = runner();
  r.send(LAUNCH, {}, [id]);
  const [run] = await steps(r, 1);
  expect(run?.error).toBeUndefined();
  // EKS is asked for one node; Smarter reports the LLMHost provisioning while it starts.
  expect(run?.result).toBe('provisioning');
  const base = `llmhost-${id}-llama`;
  expect(obj('PersistentVolumeClaim', 'v1', `${base}-models`)).toBeDefined();
  expect((obj('Secret', 'v1', base)?.data as Record<string, string>).API_KEY).toBeTruthy();
  const deployment = obj('Deployment', 'apps/v1', base);
  expect((deployment?.metadata as { labels: Record<string, string> }).labels).toMatchObject({
    'smarter.sh/llmhost': base,
    'smarter.sh/account-number': w.accountNumber,
  });
  expect(JSON.stringify(deployment?.spec)).toContain('"nodeSelector":{"smarter.sh/compute":"gpu-l4-launch"}');
  expect(obj('Service', 'v1', base)).toBeDefined();
  const hostname = `${base}.${w.accountNumber}.${API}`;
  expect(JSON.stringify(obj('Ingress', 'networking.k8s.io/v1', base)?.spec)).toContain(hostname);

  const row = await host(id);
  expect(Number(row?.compute_id)).toBe(computeId);
  expect(row).toMatchObject({
    status: 'provisioning',
    replicas: 1,
    endpoint_url: `http://${base}.${NS}.svc.cluster.local/v1`,
    public_url: `https://${hostname}/v1`,
  });
  expect(row?.deployed_at).not.toBeNull();
  expect(await events(id)).toEqual(['launched:pending', 'nodes_scaled:pending']);

  const ng = await nodegroup(`smarter-alpha-${computeId}-gpu-l4-launch`);
  expect(ng?.scalingConfig).toEqual({ minSize: 0, maxSize: 4, desiredSize: 1 });
  expect(ng?.nodeRole).toBe(PLATFORM_ROLE);
  expect(ng?.subnets).toEqual(PLATFORM_SUBNETS);
  expect(ng?.labels).toEqual({ 'smarter.sh/compute': 'gpu-l4-launch' });
  expect(ng?.instanceTypes).toEqual(['g6.2xlarge']);
  expect(await computeRow(computeId)).toMatchObject({ nodegroup_status: 'CREATING', desired_nodes: 1, ready_nodes: 0 });

  const zone = await w.cloud.route53.findZone(API);
  expect((await w.cloud.route53.getRecord(zone?.id ?? '', hostname, 'A'))?.values).toEqual(w.loadBalancer);
  expect(r.pending).toEqual([
    expect.objectContaining({ name: RECONCILE, args: [computeId], kwargs: {}, countdown: 30 }),
  ]);
});

test("own wiring: launch_llmhost of Smarter's built-in llama-3.1-8b-instruct: the Deployment in the cluster runs the container Smarter renders, with vLLM's arguments (16K context, tool calling), the key from the Secret, probes and shared memory", async () => {
  await w.newCompute({ name: 'gpu_a10g_1x' });
  // Without the gated model's token: this LLMHost's Secret holds only its API key.
  const { tokenSecret: _token, ...model } = LLAMA_3_1_8B_INSTRUCT.model;
  const id = await w.newLlmhost({ name: 'llama_3_1_8b_instruct', spec: { ...LLAMA_3_1_8B_INSTRUCT, model } });
  const r = runner();
  r.send(LAUNCH, {}, [id]);
  const [run] = await steps(r, 1);
  expect(run?.error).toBeUndefined();
  const base = `llmhost-${id}-llama-3-1-8b-instruct`;
  expect(Object.keys(obj('Secret', 'v1', base)?.data as Record<string, string>)).toEqual(['API_KEY']);
  const pod = (obj('Deployment', 'apps/v1', base)?.spec as { template: { spec: Record<string, unknown> } }).template
    .spec;
  const key = { valueFrom: { secretKeyRef: { name: base, key: 'API_KEY' } } };
  const probe = { httpGet: { path: '/health', port: 'http' }, periodSeconds: 10, timeoutSeconds: 10 };
  // As smarter/smarter/apps/llmhost/services/renderer.py and engines.py render it.
  expect(pod.containers).toEqual([
    {
      name: 'engine',
      image: 'vllm/vllm-openai:latest',
      imagePullPolicy: 'IfNotPresent',
      args: [
        '--model',
        'meta-llama/Llama-3.1-8B-Instruct',
        '--served-model-name',
        'llama-3.1-8b-instruct',
        '--host',
        '0.0.0.0',
        '--port',
        '8000',
        '--revision',
        'main',
        '--max-model-len',
        '16384',
        '--gpu-memory-utilization',
        '0.9',
        '--enable-auto-tool-choice',
        '--tool-call-parser',
        'llama3_json',
      ],
      env: [
        { name: 'HF_HOME', value: '/models/huggingface' },
        { name: 'HF_HUB_CACHE', value: '/models/huggingface/hub' },
        { name: 'VLLM_API_KEY', ...key },
      ],
      ports: [{ name: 'http', containerPort: 8000, protocol: 'TCP' }],
      resources: {
        requests: { cpu: '4', memory: '24Gi', 'nvidia.com/gpu': 1 },
        limits: { memory: '24Gi', 'nvidia.com/gpu': 1 },
      },
      volumeMounts: [
        { name: 'models', mountPath: '/models' },
        { name: 'dshm', mountPath: '/dev/shm' },
      ],
      startupProbe: { ...probe, failureThreshold: 360 },
      readinessProbe: { ...probe, failureThreshold: 3 },
      livenessProbe: {
        httpGet: { path: '/health', port: 'http' },
        periodSeconds: 30,
        timeoutSeconds: 15,
        failureThreshold: 5,
      },
    },
  ]);
  expect(pod.volumes).toEqual([
    { name: 'models', persistentVolumeClaim: { claimName: `${base}-models` } },
    { name: 'dshm', emptyDir: { medium: 'Memory', sizeLimit: '8Gi' } },
  ]);
  expect(pod.securityContext).toEqual({ fsGroup: 1000, fsGroupChangePolicy: 'OnRootMismatch' });
  expect((await host(id))?.health_check_url).toBe(`http://${base}.${NS}.svc.cluster.local/health`);
});

const secretData = (base: string) => {
  const data = (obj('Secret', 'v1', base)?.data ?? {}) as Record<string, string>;
  return Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
};
const secretRow = async (id: number) =>
  (
    await w.t.db.select(
      'SELECT id, name, description, version, annotations, user_profile_id, last_accessed, encrypted_value FROM secret_secret WHERE id = ?',
      [id],
    )
  )[0];

// Smarter: smarter/apps/llmhost/services/service.py (ensure_api_key) and smarter/apps/secret/models.py (Secret.encrypt).
test("own wiring: launch_llmhost without network.apiKeySecret creates the Smarter Secret llmhost_<name>_api_key once, Fernet-encrypted as Smarter does, links it as api_key_secret_id, and gives its key to the engine as the Kubernetes Secret's API_KEY", async () => {
  await w.newCompute({ name: 'gpu-l4-key' });
  const id = await w.newLlmhost({ name: 'keyed', spec: { ...GPU_SPEC, compute: 'gpu-l4-key' } });
  const r = runner();
  r.send(LAUNCH, {}, [id]);
  expect((await steps(r, 1))[0]?.error).toBeUndefined();
  const [link] = await w.t.db.select('SELECT api_key_secret_id FROM llmhost_llmhost WHERE id = ?', [id]);
  const row = await secretRow(Number(link?.api_key_secret_id));
  expect(row).toMatchObject({
    name: 'llmhost_keyed_api_key',
    description: 'The API key of LLMHost keyed. Generated by Smarter.',
    version: '1.0.0',
    annotations: '[]',
  });
  expect(Number(row?.user_profile_id)).toBe(w.profileId);
  expect(row?.last_accessed).not.toBeNull();
  const key = fernetDecryptPython(
    w.fernetKey,
    Buffer.from(row?.encrypted_value as unknown as Buffer).toString('ascii'),
  );
  expect(key).toMatch(/^[A-Za-z0-9_-]{43}$/);
  expect(secretData(`llmhost-${id}-keyed`)).toEqual({ API_KEY: key });
  // A relaunch reuses the Secret and its key.
  r.pending.length = 0;
  r.send(LAUNCH, {}, [id]);
  await steps(r, 1);
  expect(await w.t.db.select("SELECT id FROM secret_secret WHERE name = 'llmhost_keyed_api_key'")).toEqual([
    { id: row?.id },
  ]);
  expect(secretData(`llmhost-${id}-keyed`)).toEqual({ API_KEY: key });
});

// Smarter: smarter/apps/llmhost/services/service.py (launch: secret_value, ensure_api_key, find_secret).
test("own wiring: launch_llmhost reads model.tokenSecret and network.apiKeySecret from Smarter Secrets (the owner's, else one a staff member of their account owns), into the Kubernetes Secret as HF_TOKEN and API_KEY; a missing one fails the launch naming it", async () => {
  await w.newCompute({ name: 'gpu-l4-secrets' });
  const [staff] = await w.t.db.select('SELECT account_id FROM account_userprofile WHERE id = ?', [w.profileId]);
  const u = await w.t.db.execute(
    "INSERT INTO auth_user (username, email, is_staff, is_superuser, is_active) VALUES ('llmhost_staff', '', 1, 0, 1)",
  );
  const p = await w.t.db.execute(
    'INSERT INTO account_userprofile (created_at, updated_at, user_id, account_id) VALUES (UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), ?, ?)',
    [u.insertId, staff?.account_id],
  );
  await insertSecret(w.t.db, p.insertId, w.fernetKey, 'hf_shared_by_staff', 'huggingface_token');
  const mine = await insertSecret(w.t.db, w.profileId, w.fernetKey, 'my-chosen-key', 'my_llmhost_key');
  const spec = {
    ...GPU_SPEC,
    compute: 'gpu-l4-secrets',
    model: { ...GPU_SPEC.model, tokenSecret: 'huggingface_token' },
    network: { ingress: false, apiKeySecret: 'my_llmhost_key' },
  };
  const id = await w.newLlmhost({ name: 'gated', spec });
  const r = runner();
  r.send(LAUNCH, {}, [id]);
  expect((await steps(r, 1))[0]?.error).toBeUndefined();
  expect(secretData(`llmhost-${id}-gated`)).toEqual({ HF_TOKEN: 'hf_shared_by_staff', API_KEY: 'my-chosen-key' });
  expect(
    Number(
      (await w.t.db.select('SELECT api_key_secret_id FROM llmhost_llmhost WHERE id = ?', [id]))[0]?.api_key_secret_id,
    ),
  ).toBe(mine);
  expect(await w.t.db.select("SELECT id FROM secret_secret WHERE name = 'llmhost_gated_api_key'")).toEqual([]);

  const missing = await w.newLlmhost({
    name: 'ungated',
    spec: { ...spec, model: { ...GPU_SPEC.model, tokenSecret: 'no_such_token' } },
  });
  r.pending.length = 0;
  r.send(LAUNCH, {}, [missing]);
  const [run] = await steps(r, 1);
  expect(run?.error?.message).toBe('Secret no_such_token of LLMHost ungated does not exist.');
  expect(obj('Deployment', 'apps/v1', `llmhost-${missing}-ungated`)).toBeUndefined();
});

// Smarter: smarter/apps/llmhost/services/service.py (authorize_budgets) and smarter/apps/account/models/budget.py (charge_authorization).
test("own wiring: launch_llmhost refused by a budget lock on the owner: LLMHostBudgetExceeded with the lock's message, the LLMHost in error with an error event, nothing applied and nothing queued", async () => {
  await w.newCompute({ name: 'gpu-l4-broke' });
  const u = await w.t.db.execute(
    "INSERT INTO auth_user (username, email, is_staff, is_superuser, is_active) VALUES ('llmhost_broke', '', 0, 0, 1)",
  );
  const [acct] = await w.t.db.select('SELECT account_id FROM account_userprofile WHERE id = ?', [w.profileId]);
  const p = await w.t.db.execute(
    'INSERT INTO account_userprofile (created_at, updated_at, user_id, account_id) VALUES (UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), ?, ?)',
    [u.insertId, acct?.account_id],
  );
  const b = await w.t.db.execute(
    `INSERT INTO account_budget (created_at, updated_at, name, description, version, annotations, duration, periodic_limit, absolute_limit, action, message, period, unit, warning_threshold)
     VALUES (UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), 'llmhost-broke', '', '1.0.0', '[]', 0, 0, 10, 'block', 'Ask your admin for more GPU budget.', 'month', 'cost', 80)`,
  );
  const now = new Date().toISOString().replace('T', ' ').replace('Z', '');
  const c = await insertRow(w.t.db, 'account_resourceconstraint', {
    resource_locator: recordLocator('UserProfile', p.insertId),
    budget_id: b.insertId,
    is_active: 1,
    start_date: now,
    warned_at: null,
    exceeded_at: now,
  });
  await insertRow(w.t.db, 'account_resourcelock', {
    resource_locator: recordLocator('UserProfile', p.insertId),
    expiration_date: null,
    resource_constraint_id: c,
    reason: 'Budget llmhost-broke: the limit of $10.00 has been reached.',
  });
  const id = await insertRow(w.t.db, 'llmhost_llmhost', {
    name: 'broke',
    user_profile_id: p.insertId,
    spec: JSON.stringify({ ...GPU_SPEC, compute: 'gpu-l4-broke' }),
    compute_id: null,
    status: 'inactive',
  });
  const r = runner();
  r.send(LAUNCH, {}, [id]);
  const [run] = await steps(r, 1);
  expect(run?.error).toMatchObject({ pyType: 'LLMHostBudgetExceeded', message: 'Ask your admin for more GPU budget.' });
  expect(await host(id)).toMatchObject({
    status: 'error',
    status_message: 'Ask your admin for more GPU budget.',
    compute_id: null,
  });
  expect(
    await w.t.db.select('SELECT event_type, status, message FROM llmhost_llmhostevent WHERE llmhost_id = ?', [id]),
  ).toEqual([{ event_type: 'error', status: 'error', message: 'Launch refused: Ask your admin for more GPU budget.' }]);
  for (const [kind, v, name] of [
    ['PersistentVolumeClaim', 'v1', 'broke-models'],
    ['Secret', 'v1', 'broke'],
    ['Deployment', 'apps/v1', 'broke'],
  ] as const) {
    expect(obj(kind, v, `llmhost-${id}-${name}`)).toBeUndefined();
  }
  expect(await w.t.db.select("SELECT id FROM secret_secret WHERE name = 'llmhost_broke_api_key'")).toEqual([]);
  expect(r.pending).toEqual([]);
});

test('own wiring: reconcile_llmhost_compute re-queues (compute_id, attempt + 1) every 30 s until its node joins, then is settled: ready_nodes 1, the LLMHost active, nothing more queued', async () => {
  const computeId = await w.newCompute({ name: 'gpu-l4-settle' });
  const id = await w.newLlmhost({ name: 'settle', spec: { ...GPU_SPEC, compute: 'gpu-l4-settle' } });
  const r = runner();
  r.send(LAUNCH, {}, [id]);
  await steps(r, 1);
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
  const computeId = await w.newCompute({ name: 'gpu-l4-never' });
  const id = await w.newLlmhost({ name: 'never', spec: { ...GPU_SPEC, compute: 'gpu-l4-never' } });
  const r = runner();
  r.send(LAUNCH, {}, [id]);
  await steps(r, 1);
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
  const computeId = await w.newCompute({ name: 'gpu-l4-destroy' });
  const id = await w.newLlmhost({ name: 'gone', spec: { ...GPU_SPEC, compute: 'gpu-l4-destroy' } });
  const r = runner();
  r.send(LAUNCH, {}, [id]);
  await steps(r, 1);
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
  await w.cloud.eks.createNodegroup(CLUSTER, {
    name: ngName,
    desired: 2,
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
  await w.cloud.eks.createNodegroup(CLUSTER, {
    name: ngName,
    desired: 1,
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

/** The spec of a Deployment another controller made, complete enough for the API server (one replica). */
const deploymentSpec = (app: string) => ({
  replicas: 1,
  selector: { matchLabels: { app } },
  template: { metadata: { labels: { app } }, spec: { containers: [{ name: 'vllm', image: 'vllm/vllm-openai' }] } },
});

test('own wiring: refresh_llmhost_status observes one LLMHost, or every deployed one: {name: status} from the Deployment and pods', async () => {
  const computeId = await w.newCompute({ name: 'cpu-refresh', gpuCount: 0, gpuMemoryGb: 0 });
  const spec = { engine: { name: 'vllm' }, resources: { cpu: '1', memory: '2Gi' } };
  const a = await w.newLlmhost({ name: 'refresh_a', spec, computeId, status: 'pending' });
  const b = await w.newLlmhost({ name: 'refresh_b', spec, computeId, status: 'active' });
  const r = runner();
  // refresh_a's Deployment is ready; refresh_b's was never applied (gone).
  w.kube.put(
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: `llmhost-${a}-refresh-a`, namespace: NS },
      spec: deploymentSpec(`llmhost-${a}-refresh-a`),
      status: { readyReplicas: 1 },
    },
    'kube-controller-manager',
  );
  r.send(REFRESH, {}, [a]);
  expect((await steps(r, 1))[0]?.result).toEqual({ refresh_a: 'active' });
  r.send(REFRESH);
  const all = (await steps(r, 1))[0]?.result as Record<string, string>;
  expect(all).toMatchObject({ refresh_a: 'active', refresh_b: 'inactive' });
  expect(await events(b)).toEqual(['status_changed:inactive']);
});

// Smarter: smarter/apps/llmhost/services/service.py (observe, _persist) and services/observability.py (HealthProber).
test("own wiring: refresh_llmhost_status probes an active LLMHost's health URL where the worker can reach it: 2xx is last_health_ok 1, anything else degraded with last_health_ok 0; reconcile_llmhost_compute never probes", async () => {
  const answers = new Map<string, number>([
    ['/ok', 200],
    ['/sick', 503],
  ]);
  const server = http.createServer((req, res) => {
    res.statusCode = answers.get(req.url ?? '') ?? 404;
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = (p: string) => `http://127.0.0.1:${(server.address() as AddressInfo).port}${p}`;
  try {
    const computeId = await w.newCompute({ name: 'cpu-health', gpuCount: 0, gpuMemoryGb: 0 });
    const spec = { engine: { name: 'vllm' }, resources: { cpu: '1', memory: '2Gi' } };
    const ok = await w.newLlmhost({ name: 'health_ok', spec, computeId, status: 'active' });
    const sick = await w.newLlmhost({ name: 'health_sick', spec, computeId, status: 'active' });
    for (const [id, name, path] of [
      [ok, 'health-ok', '/ok'],
      [sick, 'health-sick', '/sick'],
    ] as const) {
      await w.t.db.execute('UPDATE llmhost_llmhost SET health_check_url = ? WHERE id = ?', [url(path), id]);
      w.kube.put(
        {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: `llmhost-${id}-${name}`, namespace: NS },
          spec: deploymentSpec(`llmhost-${id}-${name}`),
          status: { readyReplicas: 1 },
        },
        'kube-controller-manager',
      );
    }
    const health = async (id: number) =>
      (
        await w.t.db.select(
          'SELECT status, status_message, last_health_ok, last_health_check_at FROM llmhost_llmhost WHERE id = ?',
          [id],
        )
      )[0];

    // Outside the cluster (KUBERNETES_SERVICE_HOST unset) Smarter's prober is disabled: nothing is probed.
    const outside = runner();
    outside.send(REFRESH, {}, [sick]);
    expect((await steps(outside, 1))[0]?.result).toEqual({ health_sick: 'active' });
    expect(await health(sick)).toMatchObject({ last_health_ok: null, last_health_check_at: null });

    const inCluster = { ...w.env, healthProbes: true };
    const r = new CheckRunner(
      [...llmhostTasks(inCluster), ...llmclientTasks(inCluster)],
      w.deps,
    ) as CheckRunner<unknown>;
    r.send(RECONCILE, {}, [computeId]);
    await steps(r, 1);
    expect(await health(ok)).toMatchObject({ status: 'active', last_health_ok: null, last_health_check_at: null });
    r.pending.length = 0;
    r.send(REFRESH, {}, [ok]);
    r.send(REFRESH, {}, [sick]);
    const [a, b] = await steps(r, 2);
    expect([a?.result, b?.result]).toEqual([{ health_ok: 'active' }, { health_sick: 'degraded' }]);
    expect(await health(ok)).toMatchObject({
      status: 'active',
      last_health_ok: 1,
      last_health_check_at: expect.anything() as unknown,
    });
    expect(await health(sick)).toMatchObject({
      status: 'degraded',
      status_message: `1/1 replicas ready. The health check at ${url('/sick')} failed.`,
      last_health_ok: 0,
    });
    expect(await events(sick)).toEqual(['status_changed:degraded']);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});

/** Runs `fn` with KUBECONFIG pointing at a port nothing listens on: a Kubernetes API that does not answer. */
async function withKubeDown(fn: () => Promise<void>): Promise<void> {
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

test("own wiring: refresh_llmhost_status returns {} with one warning when the Kubernetes API does not answer, as Smarter's `if not service.cluster.ready`", async () => {
  const computeId = await w.newCompute({ name: 'cpu-nocluster', gpuCount: 0, gpuMemoryGb: 0 });
  await w.newLlmhost({ name: 'nocluster_a', spec: {}, computeId, status: 'active' });
  await w.newLlmhost({ name: 'nocluster_b', spec: {}, computeId, status: 'pending' });
  await withKubeDown(async () => {
    const lines: LogLine[] = [];
    const r = new CheckRunner(
      llmhostTasks(w.env),
      { db: w.t.db, cloud: testCloud() },
      recordingLogger(lines),
    ) as CheckRunner<unknown>;
    r.send(REFRESH);
    const [run] = await steps(r, 1);
    expect(run?.error).toBeUndefined();
    expect(run?.result).toEqual({});
    expect(lines.filter((l) => l.level !== 'debug').map((l) => `${l.level}: ${l.message}`)).toEqual([
      'warn: refresh_llmhost_status() the Kubernetes cluster is not available.',
    ]);
  });
});

// Smarter: smarter/apps/llmhost/tasks/__init__.py (reconcile_llmhost_compute: `if service.cluster.ready:` before observing).
test('own wiring: reconcile_llmhost_compute on a Kubernetes API that does not answer logs the compute failure once, asks nothing about its LLMHosts, and checks again', async () => {
  const computeId = await w.newCompute({ name: 'cpu-reconcile-down', gpuCount: 0, gpuMemoryGb: 0 });
  const id = await w.newLlmhost({ name: 'reconcile_down', spec: {}, computeId, status: 'active' });
  await withKubeDown(async () => {
    const lines: LogLine[] = [];
    const r = new CheckRunner(
      llmhostTasks(w.env),
      { db: w.t.db, cloud: testCloud() },
      recordingLogger(lines),
    ) as CheckRunner<unknown>;
    r.send(RECONCILE, {}, [computeId]);
    const [run] = await steps(r, 1);
    expect(run?.error).toBeUndefined();
    const errors = lines.filter((l) => l.level === 'error').map((l) => l.message);
    expect(errors).toEqual([expect.stringMatching(/^reconcile_llmhost_compute\(\) failed for cpu-reconcile-down: /)]);
    expect(r.pending).toEqual([expect.objectContaining({ name: RECONCILE, args: [computeId, 2] })]);
  });
  expect(await host(id)).toMatchObject({ status: 'active' });
  expect(await events(id)).toEqual([]);
});

// Smarter: smarter/apps/llmhost/services/service.py (launch: `if not self.cluster.ready: raise LLMHostClusterError`).
test('own wiring: launch_llmhost on a Kubernetes API that does not answer fails with LLMHostClusterError before a compute is chosen or a Secret written: the row, its events and Secrets unchanged, nothing queued', async () => {
  await w.newCompute({ name: 'gpu-l4-kube-down' });
  const id = await w.newLlmhost({ name: 'nocluster_launch', spec: GPU_SPEC, computeId: null, status: 'inactive' });
  await withKubeDown(async () => {
    const r = new CheckRunner([...llmhostTasks(w.env), ...llmclientTasks(w.env)], {
      db: w.t.db,
      cloud: testCloud(),
    }) as CheckRunner<unknown>;
    r.send(LAUNCH, {}, [id]);
    const [run] = await steps(r, 1);
    expect(run?.error).toMatchObject({
      pyType: 'LLMHostClusterError',
      message: 'The Kubernetes cluster is not available.',
    });
    expect(r.pending).toEqual([]);
  });
  expect(await host(id)).toMatchObject({ status: 'inactive', compute_id: null, endpoint_url: '' });
  expect(await events(id)).toEqual([]);
  expect(await w.t.db.select("SELECT id FROM secret_secret WHERE name = 'llmhost_nocluster_launch_api_key'")).toEqual(
    [],
  );
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

test('own wiring: bad input is a clear FAILURE or a logged None, never a crash: an unknown LLMHost, an invalid spec, a compute that does not exist, a Kubernetes 403', async () => {
  const r = runner();
  r.send(LAUNCH, {}, [999_999]);
  r.send(DESTROY, {}, [999_999]);
  r.send(RECONCILE, {}, [999_999]);
  const none = await steps(r, 3);
  expect(none.map((x) => [x.result, x.error])).toEqual([
    [null, undefined],
    [null, undefined],
    [null, undefined],
  ]);

  const bad = await w.newLlmhost({ name: 'badspec', spec: { ...GPU_SPEC, scaling: { replicas: 'two' } } });
  r.send(LAUNCH, {}, [bad]);
  const [badRun] = await steps(r, 1);
  expect(badRun?.error?.message).toMatch(/^LLMHost badspec has an invalid spec: scaling\.replicas: /);

  const missing = await w.newLlmhost({ name: 'nocompute', spec: { ...GPU_SPEC, compute: 'no-such-compute' } });
  r.send(LAUNCH, {}, [missing]);
  expect((await steps(r, 1))[0]?.error?.message).toMatch(/compute: no-such-compute does not exist/);

  await w.newCompute({ name: 'gpu-l4-forbidden' });
  const forbidden = await w.newLlmhost({ name: 'forbidden', spec: { ...GPU_SPEC, compute: 'gpu-l4-forbidden' } });
  w.kube.failNext({ status: 403, method: 'PATCH' });
  r.send(LAUNCH, {}, [forbidden]);
  const [fRun] = await steps(r, 1);
  expect(fRun?.error?.message).toMatch(/^kubernetes apply .*llmhost-\d+-forbidden-models: AccessDenied: /);
  expect(await host(forbidden)).toMatchObject({ status: 'error' });
  expect(await events(forbidden)).toEqual(['error:error']);
});

test('own wiring: EKS failures are FAILUREs naming service, verb and resource: a cluster that does not exist fails the launch (LLMHost error), and reconcile_llmhost_compute logs it and checks again', async () => {
  const computeId = await w.newCompute({ name: 'gpu-l4-nocluster' });
  const id = await w.newLlmhost({ name: 'nocluster', spec: { ...GPU_SPEC, compute: 'gpu-l4-nocluster' } });
  const env = {
    ...w.env,
    llmhost: {
      awsEksClusterName: 'no-such-cluster',
      llmhostNodeRoleArn: 'arn:aws:iam::123456789012:role/n',
      llmhostNodeSubnetIds: ['subnet-1'],
    },
  };
  const r = new CheckRunner(
    [...llmhostTasks(env), ...llmclientTasks(env), ...infrastructureTasks(env)],
    w.deps,
  ) as CheckRunner<unknown>;
  r.send(LAUNCH, {}, [id]);
  const [run] = await steps(r, 1);
  expect(run?.error?.message).toMatch(
    /^eks CreateNodegroup no-such-cluster\/smarter-alpha-\d+-gpu-l4-nocluster: NotFound: /,
  );
  expect(await host(id)).toMatchObject({ status: 'error' });
  expect(String((await host(id))?.status_message)).toMatch(
    /^The node group of compute gpu-l4-nocluster cannot be scaled: eks /,
  );
  // `error` counts as deployed (its resources were applied): the reconcile cannot create the node group, logs it, checks again.
  r.send(RECONCILE, {}, [computeId]);
  const [rec] = await steps(r, 1);
  expect(rec?.error).toBeUndefined();
  expect(rec?.result).toBeNull();
  expect(r.pending).toEqual([expect.objectContaining({ name: RECONCILE, args: [computeId, 2], countdown: 30 })]);
});
