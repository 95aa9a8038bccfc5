/**
 * sync_infrastructure_inventory through the real clients: moto's EKS cluster and node groups, the Kubernetes
 * stand-in's nodes, volumes, LoadBalancer Services, Ingresses and Certificates, and the ledger in MariaDB.
 */
import { infrastructureTasks } from '../../tasks/infrastructure/index.js';
import { CheckRunner } from '../support/check-runner.js';
import { ledgerRows } from '../support/django-rows.js';
import { CLUSTER, type LlmhostWorld, NS, llmhostWorldForFile } from '../support/llmhost-world.js';
import { ebsVolume } from '../support/kube-standin.js';

const SYNC = 'smarter.apps.infrastructure.tasks.sync_infrastructure_inventory';
let w: LlmhostWorld;
llmhostWorldForFile((world) => (w = world));

async function sync(): Promise<Run> {
  const r = new CheckRunner(infrastructureTasks(w.env), w.deps);
  r.send(SYNC);
  const [run] = await r.drain();
  return run as Run;
}
type Run = { result?: unknown; error?: Error };

const ledger = () => ledgerRows(w.t.db);

test('own wiring: records what exists as created, once; a resource gone as destroyed; a new load balancer hostname updates its row; other namespaces and ClusterIP Services are left out', async () => {
  w.joinNode('platform', 'ip-10-0-0-1');
  w.kube.put(ebsVolume('pv-ours', 'vol-0abc', NS, 'data'));
  w.kube.put(ebsVolume('pv-theirs', 'vol-0def', 'other-env', 'data'));
  w.kube.put({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'traefik', namespace: NS },
    spec: { type: 'LoadBalancer' },
    status: { loadBalancer: { ingress: [{ hostname: 'a1.elb.amazonaws.com' }] } },
  });
  w.kube.put({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'internal', namespace: NS },
    spec: { type: 'ClusterIP' },
  });
  w.kube.put({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name: 'api', namespace: NS },
    spec: { rules: [] },
  });
  w.kube.put({
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    metadata: { name: 'api-tls', namespace: NS },
    spec: { secretName: 'api-tls', issuerRef: { name: 'letsencrypt', kind: 'ClusterIssuer' } },
  });

  const first = await sync();
  expect(first.error).toBeUndefined();
  const one = { found: 1, created: 1, destroyed: 0 };
  expect(first.result).toEqual({
    'kubernetes.cluster': one,
    'kubernetes.nodegroup': one,
    'kubernetes.node': one,
    'kubernetes.persistentvolume': one,
    'kubernetes.loadbalancer': one,
    'kubernetes.ingress': one,
    'kubernetes.certificate': one,
  });
  const rows = await ledger();
  expect(rows.map((r): unknown[] => [r.resource_type, r.resource_name, r.billable, r.status])).toEqual([
    ['kubernetes.cluster', CLUSTER, 1, 'active'],
    ['kubernetes.nodegroup', 'platform', 0, 'active'],
    ['kubernetes.node', 'ip-10-0-0-1', 1, 'active'],
    ['kubernetes.persistentvolume', 'pv-ours', 1, 'active'],
    ['kubernetes.loadbalancer', 'traefik', 1, 'active'],
    ['kubernetes.ingress', 'api', 0, 'active'],
    ['kubernetes.certificate', 'api-tls', 0, 'active'],
  ]);
  expect(rows.every((r) => r.provider === 'aws' && r.service === 'kubernetes')).toBe(true);
  expect(rows.find((r) => r.resource_type === 'kubernetes.cluster')?.resource_id).toMatch(
    /^arn:aws:eks:us-east-1:\d+:cluster\/smarter-test-cluster$/,
  );
  expect(rows.find((r) => r.resource_type === 'kubernetes.node')?.resource_id).toBe('aws:///us-east-1a/i-ip-10-0-0-1');
  expect(rows.find((r) => r.resource_type === 'kubernetes.persistentvolume')?.resource_id).toBe('vol-0abc');

  // Run again: nothing new. Then the node leaves and the Ingress gets its load balancer.
  expect((await sync()).result).toMatchObject({ 'kubernetes.node': { found: 1, created: 0, destroyed: 0 } });
  await w.cloud.kube.delete({ apiVersion: 'v1', kind: 'Node', name: 'ip-10-0-0-1' });
  w.kube.put(
    {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name: 'api', namespace: NS },
      status: { loadBalancer: { ingress: [{ hostname: 'a1.elb.amazonaws.com' }] } },
    },
    'traefik',
  );
  const third = await sync();
  expect(third.result).toMatchObject({
    'kubernetes.node': { found: 0, created: 0, destroyed: 1 },
    'kubernetes.ingress': { found: 1, created: 0, destroyed: 0 },
  });
  const after = await ledger();
  const node = after.find((r) => r.resource_type === 'kubernetes.node');
  expect(node?.status).toBe('destroyed');
  expect(node?.destroyed_at).not.toBeNull();
  expect(after.find((r) => r.resource_type === 'kubernetes.ingress')?.resource_id).toBe('a1.elb.amazonaws.com');
});

test('own wiring: a type that cannot be listed is left as it is, not recorded destroyed: moto serves no EKS add-ons, and a Kubernetes 503 on Certificates', async () => {
  w.kube.failNext({ status: 503, method: 'GET', path: '/certificates' });
  const run = await sync();
  expect(run.error).toBeUndefined();
  const result = run.result as Record<string, unknown>;
  expect(result).not.toHaveProperty('kubernetes.addon');
  expect(result).not.toHaveProperty('kubernetes.certificate');
  expect((await ledger()).find((r) => r.resource_type === 'kubernetes.certificate')?.status).toBe('active');
});
