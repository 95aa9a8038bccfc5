/**
 * EC2 Auto Scaling: the group behind each EKS managed node group. Smarter's `EKSNodeGroupBackend.remove_node`
 * (`smarter/apps/llmhost/services/nodegroups.py`) removes a node through it, so that exactly that instance goes:
 * lowering the node group's desired size instead would let the group choose which instance to terminate.
 */
export interface AutoScalingGroups {
  /** `TerminateInstanceInAutoScalingGroup`: the instance, in whatever group holds it; with `decrementDesiredCapacity`, the group shrinks by one instead of replacing it. */
  terminateInstance(instanceId: string, decrementDesiredCapacity: boolean): Promise<void>;
}
