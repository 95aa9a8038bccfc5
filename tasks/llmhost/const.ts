/** Smarter's `llmhost/const.py` and the status strings of its models and manifests, as the tasks use them. */

export const RECONCILE_INTERVAL_SECONDS = 30;
/** Runs of `reconcile_llmhost_compute` before Celery Beat's `reconcile_llmhost_computes` takes over: 30 min. */
export const RECONCILE_MAX_ATTEMPTS = 60;

export const RESOURCE_PREFIX = 'llmhost';
export const MAX_RESOURCE_NAME_LENGTH = 50;
export const LABEL_LLMHOST = 'smarter.sh/llmhost';
export const LABEL_ACCOUNT = 'smarter.sh/account-number';
export const LABEL_COMPUTE = 'smarter.sh/compute';
export const TAINT_COMPUTE = LABEL_COMPUTE;
export const TAINT_GPU = 'nvidia.com/gpu';
export const SERVICE_PORT = 80;
export const MODELS_MOUNT_PATH = '/models';
export const DEFAULT_CPU = '2';
export const DEFAULT_MEMORY = '8Gi';
export const API_KEY_BYTES = 32;

/** `SAMLLMHostStatusEnum`. */
export const STATUS = {
  PROVISIONING: 'provisioning',
  PENDING: 'pending',
  DOWNLOADING: 'downloading',
  DEPLOYING: 'deploying',
  ACTIVE: 'active',
  DEGRADED: 'degraded',
  INACTIVE: 'inactive',
  ERROR: 'error',
} as const;

/**
 * `SAMLLMHostStatusEnum.deployed()`: the statuses in which an LLMHost's resources may exist and use nodes;
 * `error` among them (a pod whose image cannot be pulled still holds its node; a status check corrects it).
 */
export const DEPLOYED_STATUSES: readonly string[] = [
  STATUS.PROVISIONING,
  STATUS.PENDING,
  STATUS.DOWNLOADING,
  STATUS.DEPLOYING,
  STATUS.ACTIVE,
  STATUS.DEGRADED,
  STATUS.ERROR,
];

/** `SAMLLMHostEventType`, the `llmhost_llmhostevent.event_type` values. */
export const EVENT = {
  LAUNCHED: 'launched',
  STATUS_CHANGED: 'status_changed',
  DESTROYED: 'destroyed',
  NODES_SCALED: 'nodes_scaled',
  ERROR: 'error',
} as const;

/** `LLMHostComputeNodeGroupStatus`: EKS's node group status, or `absent`. */
export const NODEGROUP = {
  ABSENT: 'absent',
  CREATING: 'CREATING',
  ACTIVE: 'ACTIVE',
  UPDATING: 'UPDATING',
  DELETING: 'DELETING',
  CREATE_FAILED: 'CREATE_FAILED',
  DELETE_FAILED: 'DELETE_FAILED',
  DEGRADED: 'DEGRADED',
} as const;
export const NODEGROUP_FAILED: readonly string[] = [
  NODEGROUP.CREATE_FAILED,
  NODEGROUP.DELETE_FAILED,
  NODEGROUP.DEGRADED,
];

/** Kubernetes kinds (apiVersion, kind) of an LLMHost's resources. */
export const KINDS = {
  deployment: { apiVersion: 'apps/v1', kind: 'Deployment' },
  service: { apiVersion: 'v1', kind: 'Service' },
  ingress: { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress' },
  secret: { apiVersion: 'v1', kind: 'Secret' },
  persistentvolumeclaim: { apiVersion: 'v1', kind: 'PersistentVolumeClaim' },
  pod: { apiVersion: 'v1', kind: 'Pod' },
  node: { apiVersion: 'v1', kind: 'Node' },
} as const;

/** `MANAGED_KINDS`: what destroy deletes; the model volume (`VOLUME_KIND`) only when purged or not retained. */
export const MANAGED_KINDS = ['deployment', 'service', 'ingress', 'secret'] as const;
export const VOLUME_KIND = 'persistentvolumeclaim';
