/**
 * The llmhost infrastructure tasks through the real clients: moto for EKS and Route 53, the Kubernetes stand-in,
 * MariaDB; each re-queue (positional, as Smarter's) planned by the worker's own rule and run in-process. This file:
 * launch_llmhost, its resources, Secrets and budget.
 */
import { HF_ENV, gpuResources, LLAMA_8B_VLLM_ARGS } from '../support/llmhost-render.js';
import { LLAMA_3_1_8B_INSTRUCT } from '../fixtures/llmhost-builtins.js';
import { fernetDecryptPython, insertSecret } from '../support/secrets.js';
import { recordLocator } from '../../tasks/db/django.js';
import { insertRow } from '../support/django-rows.js';
import { API, type LlmhostWorld, NS, PLATFORM_ROLE, PLATFORM_SUBNETS } from '../support/llmhost-world.js';
import { llmhostWorldForFile } from '../support/llmhost-world.js';
import { GPU_SPEC, LAUNCH, RECONCILE, llmhostTaskRuns, steps } from '../support/llmhost-task-runs.js';

let w: LlmhostWorld;
llmhostWorldForFile((world) => (w = world));
const { runner, host, computeRow, events, nodegroup, obj, secretData, secretRow } = llmhostTaskRuns(() => w);

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
      args: LLAMA_8B_VLLM_ARGS,
      env: [...HF_ENV, { name: 'VLLM_API_KEY', ...key }],
      ports: [{ name: 'http', containerPort: 8000, protocol: 'TCP' }],
      resources: gpuResources('4', '24Gi', 1),
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
