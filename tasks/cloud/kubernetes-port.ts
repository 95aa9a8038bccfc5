/**
 * Kubernetes, generic over kinds: LLMClients' Ingresses, LLMHosts' Deployments, Services and PVCs, self-hosted
 * vector databases, and the inventory's lists.
 */

export interface KubeRef {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
}

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [field: string]: unknown;
}

/** Kubernetes, generic over kinds, through server-side apply with one field manager. */
export interface Kubernetes {
  apply(manifest: KubeObject): Promise<KubeObject>;
  get(ref: KubeRef): Promise<KubeObject | null>;
  list(ref: Omit<KubeRef, 'name'> & { labelSelector?: string }): Promise<KubeObject[]>;
  /** True when it deleted, false when there was nothing (a 404 is success). */
  delete(ref: KubeRef): Promise<boolean>;
}
