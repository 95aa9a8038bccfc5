/**
 * The world of the llmhost and inventory tests, on real servers through the real clients (`openCloud`): moto
 * holding an EKS cluster with the platform's own node group (whose role and subnets new node groups copy), the
 * Auto Scaling groups whose instances the test's nodes run on, and the API domain's Route 53 zone and A record; the Kubernetes stand-in serving Nodes and PersistentVolumes too,
 * where the test plays the kubelet and the Deployment controller (`joinNode`, `deploymentReady`); MariaDB.
 */
import {
  AutoScalingClient,
  CreateAutoScalingGroupCommand,
  CreateLaunchConfigurationCommand,
  DescribeAutoScalingGroupsCommand,
  SetDesiredCapacityCommand,
} from '@aws-sdk/client-auto-scaling';
import { CreateClusterCommand, CreateNodegroupCommand, EKSClient } from '@aws-sdk/client-eks';
import type { CloudDeps } from '../../tasks/cloud/cloud-deps.js';
import { type SmarterDeps, type TaskEnv, taskEnv } from '../../tasks/env/task-env.js';
import { testCloud } from './cloud.js';
import { type TestDatabase, createTestDatabase, seed } from './db.js';
import { insertRow } from './django-rows.js';
import { type KubeStandIn, startKubeStandIn } from './kube-standin.js';
import { type Moto, startMoto, useMotoEnv } from './moto.js';
import { fernetKey } from './secrets.js';
import { alphaSettings } from './alpha-settings.js';

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
  env: TaskEnv;
  eks: EKSClient;
  autoscaling: AutoScalingClient;
  /** The FERNET_ENCRYPTION_KEY of `env`, as Smarter's Python side would have it. */
  fernetKey: string;
  loadBalancer: string[];
  profileId: number;
  accountNumber: string;
  /**
   * A node of the compute's node group joined the cluster (Ready unless `ready: false`); its providerID names
   * `instanceId` (from `launchInstances`), else an instance no Auto Scaling group holds.
   */
  joinNode(compute: string, name: string, ready?: boolean, instanceId?: string): void;
  /** EC2 instances launched by the Auto Scaling group `group` in moto (created at the first call): their ids. */
  launchInstances(group: string, count: number): Promise<string[]>;
  /** The group's desired capacity and instance ids, as moto reports them. */
  autoScalingGroup(group: string): Promise<{ desired: number; instances: string[] }>;
  /** The Deployment controller reports `ready` ready replicas. */
  deploymentReady(name: string, ready: number): void;
  newCompute(o?: {
    name?: string;
    cpu?: number;
    memoryGb?: number;
    gpuCount?: number;
    gpuMemoryGb?: number;
    maxNodes?: number;
    price?: string | null;
  }): Promise<number>;
  newLlmhost(o: {
    name: string;
    spec: Record<string, unknown>;
    computeId?: number | null;
    status?: string;
  }): Promise<number>;
  stop(): Promise<void>;
}

/** One world for a test file: started before its tests (handed to `use`) and stopped after them. */
export function llmhostWorldForFile(use: (w: LlmhostWorld) => void): void {
  let world: LlmhostWorld | undefined;
  beforeAll(async () => {
    world = await startLlmhostWorld();
    use(world);
  }, 60_000);
  afterAll(async () => {
    await world?.stop();
  });
}

export async function startLlmhostWorld(
  settings: { queue?: string; healthProbes?: boolean } = {},
): Promise<LlmhostWorld> {
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
  const autoscaling = new AutoScalingClient({});
  await autoscaling.send(
    new CreateLaunchConfigurationCommand({
      LaunchConfigurationName: 'llmhost-nodes',
      ImageId: 'ami-12c6146b',
      InstanceType: 'g6.2xlarge',
    }),
  );
  const groups = new Set<string>();
  const autoScalingGroup = async (group: string) => {
    const g = (await autoscaling.send(new DescribeAutoScalingGroupsCommand({ AutoScalingGroupNames: [group] })))
      .AutoScalingGroups?.[0];
    return { desired: g?.DesiredCapacity ?? 0, instances: (g?.Instances ?? []).map((i) => i.InstanceId ?? '') };
  };
  const key = fernetKey();
  await eks.send(
    new CreateClusterCommand({
      name: CLUSTER,
      roleArn: 'arn:aws:iam::123456789012:role/eks',
      resourcesVpcConfig: { subnetIds: PLATFORM_SUBNETS },
    }),
  );
  await eks.send(
    new CreateNodegroupCommand({
      clusterName: CLUSTER,
      nodegroupName: 'platform',
      nodeRole: PLATFORM_ROLE,
      subnets: PLATFORM_SUBNETS,
      scalingConfig: { minSize: 2, maxSize: 4, desiredSize: 2 },
    }),
  );
  const loadBalancer = ['192.0.2.10'];
  const apiZone = await cloud.route53.getOrCreateZone(API);
  await cloud.route53.upsertRecord(apiZone.id, { name: API, type: 'A', ttl: 300, values: loadBalancer });
  const env = taskEnv({
    ...alphaSettings({
      operationalQueue: 'op',
      infrastructureQueue: settings.queue ?? 'infrastructure_celery_task_queue',
    }),
    awsEksClusterName: CLUSTER,
    fernetEncryptionKey: key,
    healthProbes: settings.healthProbes ?? false,
  });
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
    autoscaling,
    fernetKey: key,
    loadBalancer,
    profileId: ids.profileId,
    accountNumber: String(a?.account_number),
    joinNode(compute, name, ready = true, instanceId = `i-${name}`) {
      kube.put(
        {
          apiVersion: 'v1',
          kind: 'Node',
          metadata: { name, labels: { 'smarter.sh/compute': compute } },
          spec: { providerID: `aws:///us-east-1a/${instanceId}` },
          status: { conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
        },
        'kubelet',
      );
    },
    async launchInstances(group, count) {
      const before = groups.has(group) ? (await autoScalingGroup(group)).instances : [];
      if (groups.has(group)) {
        await autoscaling.send(
          new SetDesiredCapacityCommand({ AutoScalingGroupName: group, DesiredCapacity: before.length + count }),
        );
      } else {
        await autoscaling.send(
          new CreateAutoScalingGroupCommand({
            AutoScalingGroupName: group,
            LaunchConfigurationName: 'llmhost-nodes',
            MinSize: 0,
            MaxSize: 10,
            DesiredCapacity: count,
            AvailabilityZones: ['us-east-1a'],
          }),
        );
        groups.add(group);
      }
      return (await autoScalingGroup(group)).instances.filter((i) => !before.includes(i));
    },
    autoScalingGroup,
    deploymentReady(name, ready) {
      kube.put(
        {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name, namespace: NS },
          status: { readyReplicas: ready },
        },
        'kube-controller-manager',
      );
    },
    async newCompute(o = {}) {
      return insertRow(t.db, 'llmhost_llmhostcompute', {
        name: o.name ?? 'gpu-l4-1x',
        user_profile_id: ids.profileId,
        instance_type: 'g6.2xlarge',
        cpu: o.cpu ?? 8,
        memory_gb: o.memoryGb ?? 32,
        gpu_type: 'L4',
        gpu_count: o.gpuCount ?? 1,
        gpu_memory_gb: o.gpuMemoryGb ?? 24,
        max_nodes: o.maxNodes ?? 4,
        price_per_hour: o.price === undefined ? '0.9800' : o.price,
      });
    },
    async newLlmhost(o) {
      return insertRow(t.db, 'llmhost_llmhost', {
        name: o.name,
        user_profile_id: ids.profileId,
        spec: JSON.stringify(o.spec),
        compute_id: o.computeId ?? null,
        status: o.status ?? 'inactive',
      });
    },
    async stop() {
      restoreAws();
      if (savedKubeconfig === undefined) delete process.env.KUBECONFIG;
      else process.env.KUBECONFIG = savedKubeconfig;
      eks.destroy();
      autoscaling.destroy();
      await kube.stop();
      await moto.stop();
      await t.drop();
    },
  };
}
