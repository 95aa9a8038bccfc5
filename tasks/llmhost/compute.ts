/**
 * Smarter's `ComputeProvisioner.reconcile()`: give a compute's EKS managed node group the nodes its deployed
 * LLMHosts' pods need, without waiting. It creates the node group (at the needed size) when absent, raises the
 * desired size up to `max_nodes`, and removes ready nodes no LLMHost pod is scheduled on, each by terminating its
 * own instance in the node group's Auto Scaling group (Smarter's `EKSNodeGroupBackend.remove_node`), so a busy
 * node is never the one that goes; then stores the node group's state in `llmhost_llmhostcompute`.
 */
import { PythonException } from '../../lib/errors.js';
import type { KubeObject } from '../cloud/kubernetes-port.js';
import type { SmarterDeps, TaskEnv } from '../env/task-env.js';
import { DEPLOYED_STATUSES, KINDS, LABEL_COMPUTE, NODEGROUP, NODEGROUP_FAILED } from './const.js';
import { llmhostsWithStatus, saveComputeState } from './rows.js';
import { type ComputeRow, type PodRequests, compute, nodesNeeded, parseSpec, podRequests } from './spec.js';

export interface ComputeState {
  compute: string;
  nodegroup_status: string;
  needed: number;
  desired: number;
  ready: number;
  nodes: number;
  message: string;
  actions: string[];
}

/** New nodes are on their way: the node group is being created or updated, or has nodes not yet ready. */
export const provisioning = (s: ComputeState) =>
  s.nodegroup_status === NODEGROUP.CREATING ||
  s.nodegroup_status === NODEGROUP.UPDATING ||
  s.ready < Math.min(s.desired, s.needed);

/** The node group has the nodes its LLMHosts need, all ready, and nothing was changed this time. */
export const settled = (s: ComputeState) =>
  (s.nodegroup_status === NODEGROUP.ACTIVE || s.nodegroup_status === NODEGROUP.ABSENT) &&
  s.desired === s.ready &&
  s.ready === s.nodes &&
  s.desired >= s.needed &&
  s.actions.length === 0;

const nodeReady = (node: KubeObject) => {
  const conditions =
    (node.status as { conditions?: { type?: string; status?: string }[] } | undefined)?.conditions ?? [];
  return conditions.find((c) => c.type === 'Ready')?.status === 'True';
};

/** Smarter's `LLMHostComputeError`: the compute's node group cannot be managed. */
export class LLMHostComputeError extends PythonException {
  constructor(message: string) {
    super('LLMHostComputeError', 'smarter.apps.llmhost.services.exceptions', message);
  }
}

const providerId = (node: KubeObject) => {
  const id = (node.spec as { providerID?: unknown } | undefined)?.providerID;
  return typeof id === 'string' ? id : '';
};

/** Smarter's `instance_id`: the EC2 instance of a node's providerID, `aws:///us-east-1a/i-0abc` → `i-0abc`. */
export function instanceId(providerID: string): string {
  const instance = providerID.replace(/\/+$/, '').split('/').pop() ?? '';
  if (!instance.startsWith('i-')) {
    throw new LLMHostComputeError(`${providerID} is not the providerID of an EC2 instance.`);
  }
  return instance;
}

async function demand(deps: SmarterDeps, c: ComputeRow, log: (m: string) => void): Promise<PodRequests[]> {
  const pods: PodRequests[] = [];
  for (const host of await llmhostsWithStatus(deps.db, DEPLOYED_STATUSES, c.id)) {
    try {
      const spec = parseSpec(host.name, host.spec);
      for (let i = 0; i < spec.scaling.replicas; i++) pods.push(podRequests(spec));
    } catch (err) {
      log(`skipped ${host.name}, whose spec is invalid: ${(err as Error).message}`);
    }
  }
  return pods;
}

/** The node role and subnets of a new node group: from settings, else from the platform's own node group. */
async function nodegroupDefaults(deps: SmarterDeps, env: TaskEnv): Promise<{ role: string; subnets: string[] }> {
  const cluster = env.llmhost.awsEksClusterName;
  let role = env.llmhost.llmhostNodeRoleArn;
  let subnets = env.llmhost.llmhostNodeSubnetIds;
  if (!role || subnets.length === 0) {
    const platform = (await deps.cloud.eks.listNodegroups(cluster)).filter((n) => !n.startsWith('smarter-'));
    const first = platform[0] ? await deps.cloud.eks.describeNodegroup(cluster, platform[0]) : null;
    if (!first) {
      throw new LLMHostComputeError(
        `EKS cluster ${cluster} has no node group to copy the node role and subnets from. Set SMARTER_LLMHOST_NODE_ROLE_ARN and SMARTER_LLMHOST_NODE_SUBNET_IDS.`,
      );
    }
    role ||= first.nodeRole;
    if (subnets.length === 0) subnets = first.subnets;
  }
  return { role, subnets };
}

export async function reconcileCompute(
  deps: SmarterDeps,
  env: TaskEnv,
  c: ComputeRow,
  log: (m: string) => void,
): Promise<ComputeState> {
  const cluster = env.llmhost.awsEksClusterName;
  const name = compute.nodegroupName(c, env.settings.environment);
  const needed = nodesNeeded(await demand(deps, c, log), c);
  const nodegroup = await deps.cloud.eks.describeNodegroup(cluster, name);
  const nodes = await deps.cloud.kube.list({ ...KINDS.node, labelSelector: `${LABEL_COMPUTE}=${c.name}` });
  const readyNodes = nodes.filter(nodeReady);
  const actions: string[] = [];
  let status: string = nodegroup?.status ?? NODEGROUP.ABSENT;
  let desired = nodegroup?.desired ?? 0;
  const target = Math.min(needed, c.maxNodes);
  let message = '';

  if (!nodegroup) {
    if (target) {
      const { role, subnets } = await nodegroupDefaults(deps, env);
      const subnetIds = compute.subnetIds(c);
      const taint = compute.taint(c);
      const made = await deps.cloud.eks.createNodegroup(cluster, {
        name,
        desired: target,
        max: c.maxNodes,
        instanceType: c.instanceType,
        diskSizeGb: compute.diskSizeGb(c),
        amiType: compute.amiType(c),
        capacityType: compute.capacityType(c),
        nodeRole: role,
        subnets: subnetIds.length ? subnetIds : subnets,
        labels: { [LABEL_COMPUTE]: c.name },
        taints: [{ key: taint.key, value: taint.value, effect: 'NO_SCHEDULE' }],
        tags: {
          'smarter.sh/compute': c.name,
          'smarter.sh/environment': env.settings.environment,
          'smarter.sh/managed-by': env.platformName,
        },
      });
      // Smarter reports a node group it has just asked for as CREATING, whatever the create call answered.
      status = NODEGROUP.CREATING;
      desired = made.desired || target;
      actions.push(`created node group ${name} with ${target} nodes`);
    }
  } else if (NODEGROUP_FAILED.includes(status)) {
    message = `Node group ${nodegroup.name} is ${status}: ${nodegroup.issues.join('; ') || 'see the AWS console'}.`;
  } else if (status !== NODEGROUP.ACTIVE) {
    message = `Node group ${nodegroup.name} is ${status}.`;
  } else if (target > desired) {
    await deps.cloud.eks.scaleNodegroup(cluster, name, target, c.maxNodes);
    actions.push(`scaled node group ${nodegroup.name} from ${desired} to ${target} nodes`);
    desired = target;
  } else if (target < desired) {
    const pods = await deps.cloud.kube.list({
      ...KINDS.pod,
      namespace: env.namespace,
      labelSelector: `${LABEL_COMPUTE}=${c.name}`,
    });
    const busy = new Set(pods.map((p) => (p.spec as { nodeName?: string } | undefined)?.nodeName).filter(Boolean));
    for (const n of readyNodes.filter((node) => !busy.has(node.metadata.name)).slice(0, desired - target)) {
      await deps.cloud.autoscaling.terminateInstance(instanceId(providerId(n)), true);
      actions.push(`removed idle node ${n.metadata.name}`);
      desired -= 1;
    }
  }

  if (!message) {
    if (needed > c.maxNodes) {
      message = `Its LLMHosts need ${needed} nodes, more than its maximum of ${c.maxNodes}. Raise max_nodes, or destroy an LLMHost.`;
    } else if (readyNodes.length < Math.min(desired, target)) {
      message = `Waiting for ${Math.min(desired, target) - readyNodes.length} ${c.instanceType} nodes to join the cluster.`;
    } else message = `${readyNodes.length} of ${desired} nodes ready, for ${needed} needed.`;
  }
  const state: ComputeState = {
    compute: c.name,
    nodegroup_status: status,
    needed,
    desired,
    ready: readyNodes.length,
    nodes: nodes.length,
    message,
    actions,
  };
  await saveComputeState(deps.db, c.id, { nodegroupStatus: status, desired, ready: readyNodes.length, message });
  for (const a of actions) log(`${c.name}: ${a}`);
  return state;
}
