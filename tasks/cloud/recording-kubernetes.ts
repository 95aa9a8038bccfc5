/**
 * Smarter's `KubernetesService` records in the infrastructure ledger what it applies that a cloud bills (its
 * `billable_resources`: PersistentVolumeClaims, StatefulSets with volume claim templates, LoadBalancer Services)
 * once the cluster accepted it, and each resource it deletes by name once the delete succeeded, a resource
 * already gone included (`kubectl delete --ignore-not-found`). Every task reaches Kubernetes through this port, so
 * wrapping it here records them all, whichever task applies or deletes.
 */
import type { ResourceLedger } from './ledger-port.js';
import type { CloudDeps } from './cloud-deps.js';
import type { Kubernetes } from './kubernetes-port.js';

export function recordingKubernetes(kube: Kubernetes, ledger: ResourceLedger): Kubernetes {
  return {
    async apply(manifest) {
      const applied = await kube.apply(manifest);
      await ledger.kubernetesApplied([manifest]);
      return applied;
    },
    get: (ref) => kube.get(ref),
    list: (ref) => kube.list(ref),
    async delete(ref) {
      const deleted = await kube.delete(ref);
      await ledger.kubernetesDeleted(ref.kind, ref.name);
      return deleted;
    },
  };
}

/** The cloud ports with the ledger, as the worker runs them: Route 53, ACM and Kubernetes all record to it. */
export function withLedger(cloud: CloudDeps, ledger: ResourceLedger): CloudDeps {
  return { ...cloud, kube: recordingKubernetes(cloud.kube, ledger), ledger };
}
