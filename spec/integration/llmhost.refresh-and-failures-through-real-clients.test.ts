/**
 * The llmhost infrastructure tasks through the real clients: moto for EKS and Route 53, the Kubernetes stand-in,
 * MariaDB; each re-queue (positional, as Smarter's) planned by the worker's own rule and run in-process. This file:
 * refresh_llmhost_status, a Kubernetes API that does not answer, bad input and EKS failures.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { infrastructureTasks } from '../../tasks/infrastructure/index.js';
import { llmclientTasks } from '../../tasks/llmclient/index.js';
import { llmhostTasks } from '../../tasks/llmhost/index.js';
import { CheckRunner } from '../support/check-runner.js';
import { testCloud } from '../support/cloud.js';
import { type LogLine, recordingLogger } from '../support/logs.js';
import { type LlmhostWorld, NS, llmhostWorldForFile } from '../support/llmhost-world.js';
import { DESTROY, GPU_SPEC, LAUNCH, RECONCILE, REFRESH, deploymentSpec } from '../support/llmhost-task-runs.js';
import { llmhostTaskRuns, steps, withKubeDown } from '../support/llmhost-task-runs.js';

let w: LlmhostWorld;
llmhostWorldForFile((world) => (w = world));
const { runner, host, events } = llmhostTaskRuns(() => w);

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

/** The llmhost tasks with a cloud built now, from KUBECONFIG as `withKubeDown` set it, logging to `lines`. */
const kubeDownRunner = (lines: LogLine[]) =>
  new CheckRunner(
    llmhostTasks(w.env),
    { db: w.t.db, cloud: testCloud() },
    recordingLogger(lines),
  ) as CheckRunner<unknown>;

test("own wiring: refresh_llmhost_status returns {} with one warning when the Kubernetes API does not answer, as Smarter's `if not service.cluster.ready`", async () => {
  const computeId = await w.newCompute({ name: 'cpu-nocluster', gpuCount: 0, gpuMemoryGb: 0 });
  await w.newLlmhost({ name: 'nocluster_a', spec: {}, computeId, status: 'active' });
  await w.newLlmhost({ name: 'nocluster_b', spec: {}, computeId, status: 'pending' });
  await withKubeDown(async () => {
    const lines: LogLine[] = [];
    const r = kubeDownRunner(lines);
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
    const r = kubeDownRunner(lines);
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
