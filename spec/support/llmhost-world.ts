/**
 * The world of the llmhost and inventory tests, on real servers through the real clients (`openCloud`): moto
 * holding an EKS cluster with the platform's own node group (whose role and subnets new node groups copy) and
 * the API domain's Route 53 zone and A record; the Kubernetes stand-in serving Nodes and PersistentVolumes too,
 * where the test plays the kubelet and the Deployment controller (`joinNode`, `deploymentReady`); MariaDB.
 */
import { CreateClusterCommand, CreateNodegroupCommand, EKSClient } from '@aws-sdk/client-eks';
import type { CloudDeps } from '../../tasks/cloud/ports.js';
import type { SmarterDeps } from '../../tasks/deps.js';
import { infraEnv } from '../../tasks/llmclient/env.js';
import { INFRASTRUCTURE_DEFAULTS } from '../../tasks/llmclient/settings.js';
import { taskEnv } from '../../tasks/index.js';
import { type LlmhostEnv, llmhostEnv } from '../../tasks/llmhost/env.js';
import { LLMHOST_DEFAULTS } from '../../tasks/llmhost/settings.js';
import { testCloud } from './cloud.js';
import { type TestDatabase, createTestDatabase, seed } from './db.js';
import { type KubeStandIn, startKubeStandIn } from './kube-standin.js';
import { type Moto, startMoto, useMotoEnv } from './moto.js';

export const CLUSTER = 'smarter-test-cluster';
export const API = 'alpha.api.platform.example.com';
export const NS = 'example-platform-alpha';
export const PLATFORM_ROLE = 'arn:aws:iam::123456789012:role/platform-nodes';
export const PLATFORM_SUBNETS = ['subnet-0aaa', 'subnet-0bbb'];

export interface LlmhostWorld {
  t: TestDatabase;
  moto: Moto;
  kube: KubeStandIn;
  cloud: CloudDeps;
  deps: SmarterDeps;
  env: LlmhostEnv;
  eks: EKSClient;
  loadBalancer: string[];
  profileId: number;
  accountNumber: string;
  /** A node of the compute's node group joined the cluster (Ready unless `ready: false`). */
  joinNode(compute: string, name: string, ready?: boolean): void;
  /** The Deployment controller reports `ready` ready replicas. */
  deploymentReady(name: string, ready: number): void;
  newCompute(o?: { name?: string; cpu?: number; memoryGb?: number; gpuCount?: number; gpuMemoryGb?: number; maxNodes?: number; price?: string | null }): Promise<number>;
  newLlmhost(o: { name: string; spec: Record<string, unknown>; computeId?: number | null; status?: string }): Promise<number>;
  stop(): Promise<void>;
}

export async function startLlmhostWorld(settings: { queue?: string } = {}): Promise<LlmhostWorld> {
  const t = await createTestDatabase('llmhost');
  const moto = await startMoto();
  const restoreAws = useMotoEnv(moto.endpoint);
  const kube = await startKubeStandIn({
    defaultNamespace: NS,
    kinds: [
      { apiVersion: 'v1', kind: 'Node', namespaced: false },
      { apiVersion: 'v1', kind: 'PersistentVolume', namespaced: false },
    ],
  });
  const savedKubeconfig = process.env.KUBECONFIG;
  process.env.KUBECONFIG = kube.kubeconfig;
  const cloud = testCloud();
  const eks = new EKSClient({});
  await eks.send(new CreateClusterCommand({ name: CLUSTER, roleArn: 'arn:aws:iam::123456789012:role/eks', resourcesVpcConfig: { subnetIds: PLATFORM_SUBNETS } }));
  await eks.send(
    new CreateNodegroupCommand({ clusterName: CLUSTER, nodegroupName: 'platform', nodeRole: PLATFORM_ROLE, subnets: PLATFORM_SUBNETS, scalingConfig: { minSize: 2, maxSize: 4, desiredSize: 2 } }),
  );
  const loadBalancer = ['192.0.2.10'];
  const apiZone = await cloud.route53.getOrCreateZone(API);
  await cloud.route53.upsertRecord(apiZone.id, { name: API, type: 'A', ttl: 300, values: loadBalancer });
  const env = llmhostEnv(
    infraEnv(taskEnv({ operationalQueue: 'op', infrastructureQueue: settings.queue ?? 'infrastructure_celery_task_queue', maxRetries: 3, retryBackoff: true }), {
      ...INFRASTRUCTURE_DEFAULTS,
      environment: 'alpha',
      rootDomain: 'example.com',
    }),
    { ...LLMHOST_DEFAULTS, awsEksClusterName: CLUSTER },
  );
  const ids = await seed(t.db);
  const [a] = await t.db.select('SELECT account_number FROM account_account WHERE id = ?', [ids.accountId]);
  return {
    t,
    moto,
    kube,
    cloud,
    deps: { db: t.db, cloud },
    env,
    eks,
    loadBalancer,
    profileId: ids.profileId,
    accountNumber: String(a?.account_number),
    joinNode(compute, name, ready = true) {
      kube.put({
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name, labels: { 'smarter.sh/compute': compute } },
        spec: { providerID: `aws:///us-east-1a/i-${name}` },
        status: { conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
      }, 'kubelet');
    },
    deploymentReady(name, ready) {
      kube.put({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace: NS }, status: { readyReplicas: ready } }, 'kube-controller-manager');
    },
    async newCompute(o = {}) {
      const r = await t.db.execute(
        `INSERT INTO llmhost_llmhostcompute (created_at, updated_at, name, user_profile_id, instance_type, cpu, memory_gb, gpu_type, gpu_count, gpu_memory_gb, max_nodes, price_per_hour, spec)
         VALUES (UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), ?, ?, 'g6.2xlarge', ?, ?, 'L4', ?, ?, ?, ?, '{}')`,
        [o.name ?? 'gpu-l4-1x', ids.profileId, o.cpu ?? 8, o.memoryGb ?? 32, o.gpuCount ?? 1, o.gpuMemoryGb ?? 24, o.maxNodes ?? 4, o.price === undefined ? '0.9800' : o.price],
      );
      return r.insertId;
    },
    async newLlmhost(o) {
      const r = await t.db.execute(
        `INSERT INTO llmhost_llmhost (created_at, updated_at, name, user_profile_id, spec, compute_id, status) VALUES (UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), ?, ?, ?, ?, ?)`,
        [o.name, ids.profileId, JSON.stringify(o.spec), o.computeId ?? null, o.status ?? 'inactive'],
      );
      return r.insertId;
    },
    async stop() {
      restoreAws();
      if (savedKubeconfig === undefined) delete process.env.KUBECONFIG;
      else process.env.KUBECONFIG = savedKubeconfig;
      eks.destroy();
      await kube.stop();
      await moto.stop();
      await t.drop();
    },
  };
}
