/**
 * An LLMHost's status from its Deployment and pods, as Smarter's `observability.interpret` maps them: no
 * Deployment is `inactive`; a passed progress deadline with nothing ready, or a container waiting for a reason
 * that does not resolve by itself (an image that cannot be pulled, a crash loop), is `error`; all replicas ready
 * `active`, some `degraded`; an init container copying weights `downloading`; no pods or an unschedulable one
 * `pending`; otherwise `deploying`.
 */
import type { KubeObject } from '../cloud/kubernetes-port.js';
import { STATUS } from './const.js';

const ERROR_REASONS = new Set([
  'ErrImagePull',
  'ImagePullBackOff',
  'InvalidImageName',
  'CrashLoopBackOff',
  'CreateContainerConfigError',
  'CreateContainerError',
  'RunContainerError',
]);

interface ContainerStatus {
  name?: string;
  state?: { waiting?: { reason?: string; message?: string }; running?: unknown };
}
interface PodStatus {
  initContainerStatuses?: ContainerStatus[];
  containerStatuses?: ContainerStatus[];
  conditions?: { type?: string; status?: string; reason?: string; message?: string }[];
}

const podStatus = (pod: KubeObject) => (pod.status ?? {}) as PodStatus;
const joined = (...parts: (string | undefined)[]) => parts.filter((p) => p).join(': ');

function hasError(pod: KubeObject): string | null {
  const st = podStatus(pod);
  for (const c of [...(st.initContainerStatuses ?? []), ...(st.containerStatuses ?? [])]) {
    const waiting = c.state?.waiting;
    if (waiting?.reason && ERROR_REASONS.has(waiting.reason)) return joined(c.name, waiting.reason, waiting.message);
  }
  return null;
}

function unschedulable(pod: KubeObject): string | null {
  const c = (podStatus(pod).conditions ?? []).find((x) => x.type === 'PodScheduled' && x.status === 'False');
  return c ? joined(c.reason ?? 'Unschedulable', c.message) : null;
}

export interface Interpretation {
  status: string;
  message: string;
  replicas: number;
  ready: number;
}

export function interpret(deployment: KubeObject | null, pods: KubeObject[]): Interpretation {
  if (!deployment) return { status: STATUS.INACTIVE, message: 'Not deployed.', replicas: 0, ready: 0 };
  const replicas = Number((deployment.spec as { replicas?: number } | undefined)?.replicas ?? 1) || 0;
  const dstatus = (deployment.status ?? {}) as {
    readyReplicas?: number;
    conditions?: { type?: string; reason?: string; message?: string }[];
  };
  const ready = Number(dstatus.readyReplicas ?? 0) || 0;
  const at = (status: string, message: string) => ({ status, message, replicas, ready });
  const deadline = (dstatus.conditions ?? []).find(
    (c) => c.type === 'Progressing' && c.reason === 'ProgressDeadlineExceeded',
  );
  if (deadline && ready === 0) return at(STATUS.ERROR, deadline.message ?? 'Progress deadline exceeded.');
  const errors = pods.map(hasError).filter((e): e is string => e !== null);
  if (replicas && ready >= replicas) return at(STATUS.ACTIVE, `${ready}/${replicas} replicas ready.`);
  if (ready > 0) return at(STATUS.DEGRADED, `${ready}/${replicas} replicas ready.${errors[0] ? ` ${errors[0]}` : ''}`);
  if (errors[0]) return at(STATUS.ERROR, errors[0]);
  if (
    pods.some((p) =>
      (podStatus(p).initContainerStatuses ?? []).some((c) => c.state !== undefined && 'running' in c.state),
    )
  ) {
    return at(STATUS.DOWNLOADING, 'Copying the model weights to the model volume.');
  }
  const blocked = pods.map(unschedulable).filter((u): u is string => u !== null);
  if (pods.length === 0 || blocked[0]) return at(STATUS.PENDING, blocked[0] ?? 'Waiting for pods to be created.');
  return at(STATUS.DEPLOYING, 'Starting the inference server, and downloading and loading the weights.');
}
