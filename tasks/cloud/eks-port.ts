/**
 * EKS: the platform's cluster as the cloud sees it (for the inventory), and its managed node groups, one per
 * LLMHostCompute (for the llmhost tasks). Smarter's `EKSNodeGroupBackend` and `AWSEks` helper call the same
 * operations (`smarter/apps/llmhost/services/nodegroups.py`, `infrastructure/providers/aws/provider.py`).
 */

/** As EKS reports a node group's status; Smarter stores it in `llmhost_llmhostcompute.nodegroup_status`. */
export type NodegroupStatus =
  'CREATING' | 'ACTIVE' | 'UPDATING' | 'DELETING' | 'CREATE_FAILED' | 'DELETE_FAILED' | 'DEGRADED';

export interface Nodegroup {
  name: string;
  arn: string;
  /** A NodegroupStatus, or whatever newer status EKS answers. */
  status: string;
  desired: number;
  max: number;
  /** `code: message` of each health issue. */
  issues: string[];
  nodeRole: string;
  subnets: string[];
}

export interface Taint {
  key: string;
  value: string;
  /** EKS's spelling: NO_SCHEDULE, NO_EXECUTE, PREFER_NO_SCHEDULE. */
  effect: 'NO_SCHEDULE' | 'NO_EXECUTE' | 'PREFER_NO_SCHEDULE';
}

export interface NodegroupSpec {
  name: string;
  desired: number;
  max: number;
  instanceType: string;
  diskSizeGb: number;
  amiType: string;
  capacityType: string;
  nodeRole: string;
  subnets: string[];
  labels: Record<string, string>;
  taints: Taint[];
  tags: Record<string, string>;
}

export interface EksResource {
  name: string;
  arn: string;
}

export interface ManagedNodeGroups {
  /** The cluster, or null when EKS has no cluster of that name. */
  describeCluster(cluster: string): Promise<(EksResource & { status: string }) | null>;
  /** The cluster's managed add-ons (VPC CNI, CoreDNS…), with their ARNs. */
  listAddons(cluster: string): Promise<EksResource[]>;
  listNodegroups(cluster: string): Promise<string[]>;
  /** The node group, or null when it does not exist. */
  describeNodegroup(cluster: string, name: string): Promise<Nodegroup | null>;
  createNodegroup(cluster: string, spec: NodegroupSpec): Promise<Nodegroup>;
  /** Sets min 0, `max` and `desired`. */
  scaleNodegroup(cluster: string, name: string, desired: number, max: number): Promise<void>;
}
