/**
 * The Kubernetes adapter through the real @kubernetes/client-node against the API stand-in, reached with a
 * generated kubeconfig as KUBECONFIG, the way the worker finds a cluster outside a pod.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { KubeConfig, KubernetesObjectApi, PatchStrategy } from '@kubernetes/client-node';
import { cloudFailure, testCloud } from '../support/cloud.js';
import { startKubeStandIn, type KubeStandIn } from '../support/kube-standin.js';
import type { KubeObject, Kubernetes } from '../../tasks/cloud/kubernetes-port.js';

let kube: KubeStandIn;
let client: Kubernetes;
let savedKubeconfig: string | undefined;

beforeAll(async () => {
  kube = await startKubeStandIn({ defaultNamespace: 'smarter' });
  savedKubeconfig = process.env.KUBECONFIG;
  process.env.KUBECONFIG = kube.kubeconfig;
  client = testCloud().kube;
});
afterAll(async () => {
  if (savedKubeconfig === undefined) delete process.env.KUBECONFIG;
  else process.env.KUBECONFIG = savedKubeconfig;
  await kube?.stop();
});

const name = () => `api-${randomUUID().slice(0, 8)}-example-com`;

function ingress(n: string, host: string, labels: Record<string, string> = {}): KubeObject {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: {
      name: n,
      namespace: 'smarter',
      labels: { 'app.kubernetes.io/managed-by': 'smarter-worker', ...labels },
    },
    spec: {
      ingressClassName: 'traefik',
      tls: [{ hosts: [host], secretName: `${host}-tls` }],
      rules: [
        {
          host,
          http: {
            paths: [
              { path: '/', pathType: 'Prefix', backend: { service: { name: 'smarter', port: { number: 8000 } } } },
            ],
          },
        },
      ],
    },
  };
}

test('own wiring: apply creates with server-side apply as field manager smarter-worker; applying the same again changes nothing', async () => {
  const n = name();
  const first = await client.apply(ingress(n, 'a.example.com'));
  expect(first).toMatchObject({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name: n, namespace: 'smarter' },
  });
  expect(first.metadata.resourceVersion).toBeDefined();
  const again = await client.apply(ingress(n, 'a.example.com'));
  expect(again.metadata.resourceVersion).toBe(first.metadata.resourceVersion);
  const changed = await client.apply(ingress(n, 'b.example.com'));
  expect(Number(changed.metadata.resourceVersion)).toBeGreaterThan(Number(first.metadata.resourceVersion));
  expect((changed.spec as { rules: Array<{ host: string }> }).rules[0]?.host).toBe('b.example.com');
  const patch = kube.requests.filter((r) => r.startsWith('PATCH ') && r.includes(`/ingresses/${n}`));
  expect(patch.length).toBe(3);
  expect(patch.every((r) => r.includes('fieldManager=smarter-worker') && r.includes('force=true'))).toBe(true);
  expect(
    kube.object({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', namespace: 'smarter', name: n })?.metadata,
  ).toMatchObject({
    managedFields: [expect.objectContaining({ manager: 'smarter-worker', operation: 'Apply' })],
  });
});

test('own wiring: apply wins over another field manager (force), as the worker owns what it applies', async () => {
  const n = name();
  kube.put(ingress(n, 'kubectl.example.com'), 'kubectl-client-side-apply');
  const mine = await client.apply(ingress(n, 'mine.example.com'));
  expect((mine.spec as { rules: Array<{ host: string }> }).rules[0]?.host).toBe('mine.example.com');
});

test('own wiring: get reads what is there (a Certificate flipped Ready by cert-manager, a Secret it wrote), or null', async () => {
  const n = name();
  const ref = { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', namespace: 'smarter', name: n };
  await client.apply({
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    metadata: { name: n, namespace: 'smarter' },
    spec: { secretName: `${n}-tls`, issuerRef: { kind: 'ClusterIssuer', name: 'letsencrypt-prod' } },
  });
  expect((await client.get(ref))?.status).toBeUndefined();
  kube.setCondition(ref, 'Ready', 'True', 'Ready', 'Certificate is up to date and has not expired');
  const ready = await client.get(ref);
  expect(ready).toMatchObject({ apiVersion: 'cert-manager.io/v1', kind: 'Certificate' });
  expect((ready?.status as { conditions: unknown[] }).conditions).toEqual([
    expect.objectContaining({ type: 'Ready', status: 'True' }),
  ]);

  kube.put(
    {
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'kubernetes.io/tls',
      metadata: { name: `${n}-tls`, namespace: 'smarter' },
      stringData: { 'tls.crt': 'CERT', 'tls.key': 'KEY' },
    },
    'cert-manager',
  );
  const secret = await client.get({ apiVersion: 'v1', kind: 'Secret', namespace: 'smarter', name: `${n}-tls` });
  expect(secret).toMatchObject({
    kind: 'Secret',
    type: 'kubernetes.io/tls',
    data: { 'tls.crt': Buffer.from('CERT').toString('base64') },
  });

  expect(
    await client.get({ apiVersion: 'v1', kind: 'Secret', namespace: 'smarter', name: 'no-such-secret' }),
  ).toBeNull();
});

test('own wiring: list filters by label selector and gives each item its kind and apiVersion', async () => {
  const run = randomUUID().slice(0, 8);
  const [a, b, c] = [name(), name(), name()];
  await client.apply(ingress(a, 'a.example.com', { run, tier: 'api' }));
  await client.apply(ingress(b, 'b.example.com', { run, tier: 'web' }));
  await client.apply(ingress(c, 'c.example.com', { run: 'other' }));
  const names = async (labelSelector: string) =>
    (await client.list({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', namespace: 'smarter', labelSelector }))
      .map((o) => o.metadata.name)
      .sort();
  expect(await names(`run=${run}`)).toEqual([a, b].sort());
  expect(await names(`run=${run},tier!=web`)).toEqual([a]);
  expect(await names(`run in (${run},other),tier notin (web)`)).toEqual([a, c].sort());
  const items = await client.list({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    namespace: 'smarter',
    labelSelector: `run=${run}`,
  });
  expect(items.every((o) => o.kind === 'Ingress' && o.apiVersion === 'networking.k8s.io/v1')).toBe(true);
});

test('own wiring: delete twice: true, then false (a 404 is success); the object is gone', async () => {
  const n = name();
  await client.apply(ingress(n, 'gone.example.com'));
  const ref = { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', namespace: 'smarter', name: n };
  await expect(client.delete(ref)).resolves.toBe(true);
  await expect(client.delete(ref)).resolves.toBe(false);
  expect(await client.get(ref)).toBeNull();
});

test('own wiring: a 409 Conflict is a CloudError Conflict naming the verb and the object', async () => {
  const n = name();
  kube.failNext({ status: 409, method: 'PATCH' });
  const err = await cloudFailure(client.apply(ingress(n, 'c.example.com')));
  expect(err).toMatchObject({
    service: 'kubernetes',
    verb: 'apply',
    resource: `networking.k8s.io/v1/Ingress smarter/${n}`,
    kind: 'Conflict',
  });
  expect(err.message).toContain(`Operation cannot be fulfilled on ingresses.networking.k8s.io "${n}"`);
});

test("own wiring: a 403 Forbidden is a CloudError AccessDenied with the API server's words", async () => {
  kube.failNext({ status: 403, method: 'DELETE' });
  const err = await cloudFailure(
    client.delete({ apiVersion: 'cert-manager.io/v1', kind: 'Certificate', namespace: 'smarter', name: 'x-tls' }),
  );
  expect(err).toMatchObject({
    service: 'kubernetes',
    verb: 'delete',
    resource: 'cert-manager.io/v1/Certificate smarter/x-tls',
    kind: 'AccessDenied',
  });
  expect(err.message).toContain(
    'certificates.cert-manager.io "x-tls" is forbidden: User "system:serviceaccount:smarter:smarter-worker" cannot delete resource "certificates"',
  );
});

test('own wiring: an invalid object (422) is a CloudError Invalid; a kind the server does not serve is Invalid, not "not found"', async () => {
  const bad = await cloudFailure(client.apply(ingress('Not_A_Name', 'x.example.com')));
  expect(bad).toMatchObject({ verb: 'apply', kind: 'Invalid' });
  expect(bad.message).toContain('a lowercase RFC 1123 subdomain');
  const unknown = await cloudFailure(
    client.delete({ apiVersion: 'example.com/v1', kind: 'Widget', namespace: 'smarter', name: 'w' }),
  );
  expect(unknown).toMatchObject({ verb: 'delete', kind: 'Invalid' });
  expect(unknown.message).toContain('does not serve');
});

test('own wiring: an API server that does not answer is Unavailable; a missing kubeconfig is Invalid, and only at the first call', async () => {
  const dir = os.tmpdir();
  const file = path.join(dir, `kubeconfig-${randomUUID()}.json`);
  writeFileSync(file, readFileSync(kube.kubeconfig, 'utf8').replace(kube.server, 'http://127.0.0.1:9'));
  const saved = process.env.KUBECONFIG;
  process.env.KUBECONFIG = file;
  try {
    const offline = testCloud().kube;
    const err = await cloudFailure(offline.get({ apiVersion: 'v1', kind: 'Secret', namespace: 'smarter', name: 'x' }));
    expect(err).toMatchObject({ service: 'kubernetes', verb: 'get', kind: 'Unavailable' });
    process.env.KUBECONFIG = path.join(dir, 'no-such-kubeconfig');
    // Built, never called: nothing is read; the first call says what is wrong.
    const unconfigured = testCloud().kube;
    const missing = await cloudFailure(
      unconfigured.get({ apiVersion: 'v1', kind: 'Secret', namespace: 'smarter', name: 'x' }),
    );
    expect(missing).toMatchObject({ service: 'kubernetes', verb: 'get', kind: 'Invalid' });
    expect(missing.message).toContain('no-such-kubeconfig');
  } finally {
    process.env.KUBECONFIG = saved;
    rmSync(file, { force: true });
  }
});

test('own wiring: the stand-in plays cert-manager: an annotated Ingress gets its Certificate, not Ready; issuing makes it Ready with its TLS Secret', async () => {
  const n = name();
  const host = `${n}.example.com`;
  const manifest = ingress(n, host);
  manifest.metadata.annotations = { 'cert-manager.io/cluster-issuer': 'letsencrypt-prod' };
  await client.apply(manifest);
  const ref = { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', namespace: 'smarter', name: `${host}-tls` };
  const pending = await client.get(ref);
  expect(pending?.spec).toMatchObject({
    secretName: `${host}-tls`,
    dnsNames: [host],
    issuerRef: { kind: 'ClusterIssuer', name: 'letsencrypt-prod' },
  });
  expect((pending?.status as { conditions: unknown[] }).conditions).toEqual([
    expect.objectContaining({ type: 'Ready', status: 'False' }),
  ]);
  expect(await client.get({ apiVersion: 'v1', kind: 'Secret', namespace: 'smarter', name: `${host}-tls` })).toBeNull();

  kube.issueCertificate({ namespace: 'smarter', name: `${host}-tls` });
  expect(((await client.get(ref))?.status as { conditions: unknown[] }).conditions).toEqual([
    expect.objectContaining({ type: 'Ready', status: 'True' }),
  ]);
  expect(
    await client.get({ apiVersion: 'v1', kind: 'Secret', namespace: 'smarter', name: `${host}-tls` }),
  ).toMatchObject({ type: 'kubernetes.io/tls' });
  // Applying the Ingress again leaves the issued Certificate as it is.
  await client.apply(manifest);
  expect(((await client.get(ref))?.status as { conditions: unknown[] }).conditions).toEqual([
    expect.objectContaining({ status: 'True' }),
  ]);
});

describe('own wiring: the stand-in validates every object it is sent, and answers 422 as an API server does', () => {
  const api = () => {
    const kc = new KubeConfig();
    kc.loadFromFile(kube.kubeconfig);
    return KubernetesObjectApi.makeApiClient(kc);
  };
  /** The Status of a refused call, as the real client received it. */
  const statusOf = async (call: Promise<unknown>) => {
    const err = (await call.then(
      () => {
        throw new Error('the stand-in accepted an invalid object');
      },
      (e: unknown) => e,
    )) as { code?: number; body?: unknown };
    return { code: err.code, status: JSON.parse(String(err.body)) as Record<string, unknown> };
  };
  const badPathType = (n: string) => {
    const o = ingress(n, 'bad.example.com');
    const rule = (o.spec as { rules: Array<{ http: { paths: Array<{ pathType: string }> } }> }).rules[0];
    if (rule?.http.paths[0]) rule.http.paths[0].pathType = 'Everything';
    return o;
  };

  test('server-side apply of an invalid Ingress: 422 Invalid, a cause naming the field, nothing stored', async () => {
    const n = name();
    const { code, status } = await statusOf(
      api().patch(badPathType(n), undefined, undefined, 'smarter-worker', true, PatchStrategy.ServerSideApply),
    );
    expect(code).toBe(422);
    expect(status).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: `Ingress.networking.k8s.io "${n}" is invalid: spec.rules[0].http.paths[0].pathType: Unsupported value: "Everything": supported values: "Exact", "ImplementationSpecific", "Prefix"`,
      reason: 'Invalid',
      details: {
        name: n,
        group: 'networking.k8s.io',
        kind: 'Ingress',
        causes: [
          {
            reason: 'FieldValueNotSupported',
            message: 'Unsupported value: "Everything": supported values: "Exact", "ImplementationSpecific", "Prefix"',
            field: 'spec.rules[0].http.paths[0].pathType',
          },
        ],
      },
      code: 422,
    });
    expect(kube.object({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', namespace: 'smarter', name: n })).toBe(
      undefined,
    );
    // Through the worker's adapter, the same answer is a CloudError Invalid that carries the API server's words.
    const failure = await cloudFailure(client.apply(badPathType(n)));
    expect(failure).toMatchObject({ verb: 'apply', kind: 'Invalid' });
    expect(failure.message).toContain('spec.rules[0].http.paths[0].pathType: Unsupported value: "Everything"');
  });

  test('create, replace and a merge patch are validated too; what was stored stays as it was', async () => {
    const n = name();
    const secret = (data: unknown) => ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: n, namespace: 'smarter' },
      data,
    });
    const created = await statusOf(api().create({ ...secret({}), immutable: 'yes' }));
    expect(created.code).toBe(422);
    expect((created.status.details as { causes: unknown[] }).causes).toEqual([
      { reason: 'FieldValueTypeInvalid', message: 'Invalid value: "yes": must be of type boolean', field: 'immutable' },
    ]);
    await api().create(secret({ key: Buffer.from('v').toString('base64') }));
    expect((await statusOf(api().create(secret({})))).status).toMatchObject({ reason: 'AlreadyExists', code: 409 });
    const replaced = await statusOf(api().replace({ ...secret({}), type: 7 }));
    expect(replaced.code).toBe(422);
    expect(replaced.status.message).toBe(`Secret "${n}" is invalid: type: Invalid value: 7: must be of type string`);
    const patched = await statusOf(
      api().patch(
        { ...secret({}), metadata: { name: n, namespace: 'smarter', labels: { tier: 'not ok!' } } },
        undefined,
        undefined,
        undefined,
        undefined,
        PatchStrategy.MergePatch,
      ),
    );
    expect(patched.code).toBe(422);
    expect((patched.status.details as { causes: Array<{ field: string }> }).causes[0]?.field).toBe('metadata.labels');
    expect(kube.object({ apiVersion: 'v1', kind: 'Secret', namespace: 'smarter', name: n })).toMatchObject({
      data: { key: Buffer.from('v').toString('base64') },
    });
    const stored = kube.object({ apiVersion: 'v1', kind: 'Secret', namespace: 'smarter', name: n });
    expect((stored?.metadata as { labels?: unknown } | undefined)?.labels).toBeUndefined();
    const ok = await api().patch(
      { ...secret({}), metadata: { name: n, namespace: 'smarter', labels: { tier: 'ok' } } },
      undefined,
      undefined,
      undefined,
      undefined,
      PatchStrategy.MergePatch,
    );
    expect(ok.metadata?.labels).toEqual({ tier: 'ok' });
  });

  test("a kind no schema describes is refused, not stored unvalidated; the test API's writes are validated too", async () => {
    const widgets = await startKubeStandIn({ kinds: [{ apiVersion: 'example.com/v1', kind: 'Widget' }] });
    try {
      expect(() =>
        widgets.put({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: {} }),
      ).toThrow(/no schema for kind Widget/);
      expect(() =>
        kube.put({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { replicas: 1 } }),
      ).toThrow(/spec.selector: Required value/);
    } finally {
      await widgets.stop();
    }
  });
});
