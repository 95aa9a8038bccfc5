/**
 * An LLMHost's spec as Smarter reads it (`LLMHostService.spec_of`: `SAMLLMHostSpec`, in `spec-model.ts`), and an
 * LLMHostCompute's node, as Smarter's `LLMHostCompute` properties compute it.
 */
import { PythonException } from '../../lib/errors.js';
import { DEFAULT_CPU, DEFAULT_MEMORY, NODEGROUP, TAINT_COMPUTE, TAINT_GPU } from './const.js';
import { type LlmhostSpec, llmhostSpec } from './spec-model.js';

export type { LlmhostSpec } from './spec-model.js';

/** Smarter's `smarter.apps.llmhost.services.exceptions.LLMHostConfigurationError`: retrying cannot fix it. */
export class LLMHostConfigurationError extends PythonException {
  constructor(message: string) {
    super('LLMHostConfigurationError', 'smarter.apps.llmhost.services.exceptions', message);
  }
}

/** `spec_of`: the spec, or an LLMHostConfigurationError naming the first field that Smarter would reject. */
export function parseSpec(name: string, raw: unknown): LlmhostSpec {
  const parsed = llmhostSpec.safeParse(raw ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue ? issue.path.map(String).join('.') : '';
    const why = !issue ? 'not an object' : where ? `${where}: ${issue.message}` : issue.message;
    throw new LLMHostConfigurationError(`LLMHost ${name} has an invalid spec: ${why}`);
  }
  return parsed.data;
}

const SUFFIXES: Record<string, number> = {
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

export function cpuMillicores(value: string | number | null | undefined): number {
  const v = String(value ?? DEFAULT_CPU).trim();
  const n = v.endsWith('m') ? Number(v.slice(0, -1)) : Number(v) * 1000;
  if (!Number.isFinite(n)) {
    throw new LLMHostConfigurationError(`'${v}' is not a Kubernetes CPU quantity, e.g. 4 or 3500m.`);
  }
  return Math.ceil(n);
}

export function memoryMib(value: string | null | undefined): number {
  const m = /^([0-9.]+)([a-zA-Z]*)$/.exec(String(value ?? DEFAULT_MEMORY).trim());
  const factor = m ? SUFFIXES[m[2] ?? ''] : undefined;
  if (!m || factor === undefined) {
    throw new LLMHostConfigurationError(`'${value ?? ''}' is not a Kubernetes memory quantity, e.g. 24Gi.`);
  }
  return Math.ceil((Number(m[1]) * factor) / 2 ** 20);
}

export interface PodRequests {
  cpuMillicores: number;
  memoryMib: number;
  gpus: number;
  vramGb: number;
}

export function podRequests(spec: LlmhostSpec): PodRequests {
  return {
    cpuMillicores: cpuMillicores(spec.resources.cpu),
    memoryMib: memoryMib(spec.resources.memory),
    gpus: spec.resources.gpuCount,
    vramGb: spec.resources.vramRequiredGb ?? 0,
  };
}

/** An `llmhost_llmhostcompute` row, with what Smarter's model derives from it. */
export interface ComputeRow {
  id: number;
  name: string;
  userProfileId: number;
  accountId: number;
  instanceType: string;
  cpu: number;
  memoryGb: number;
  gpuCount: number;
  gpuMemoryGb: number;
  maxNodes: number;
  pricePerHour: string | null;
  nodegroupStatus: string;
  desiredNodes: number;
  readyNodes: number;
  statusMessage: string;
  spec: Record<string, unknown>;
}

const str = (v: unknown) => (typeof v === 'string' ? v : '');
const obj = (v: unknown): Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

export const compute = {
  /** Kubelet, OS and DaemonSets reserve half a core plus 2%. */
  allocatableCpu: (c: ComputeRow) => c.cpu * 1000 - 500 - Math.floor((c.cpu * 1000 * 2) / 100),
  /** And 1.5 GiB plus 3% of memory. */
  allocatableMemory: (c: ComputeRow) => c.memoryGb * 1024 - 1536 - Math.floor((c.memoryGb * 1024 * 3) / 100),
  /** `smarter-<environment>-<id>-<name>`, at most 63 characters: unique to the environment. */
  nodegroupName(c: ComputeRow, environment: string): string {
    const env = environment.toLowerCase().replace(/[^a-z0-9-]+/g, '-');
    const name = c.name
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, '-')
      .replace(/^-+|-+$/g, '');
    return `smarter-${env}-${c.id}-${name}`.slice(0, 63).replace(/-+$/, '');
  },
  taint: (c: ComputeRow) =>
    c.gpuCount > 0
      ? { key: TAINT_GPU, value: 'true', effect: 'NoSchedule' }
      : { key: TAINT_COMPUTE, value: c.name, effect: 'NoSchedule' },
  node: (c: ComputeRow) => obj(c.spec.node),
  diskSizeGb: (c: ComputeRow) => Number(compute.node(c).diskSizeGb ?? 0) || 100,
  capacityType: (c: ComputeRow) => str(compute.node(c).capacityType) || 'ON_DEMAND',
  amiType: (c: ComputeRow) =>
    str(compute.node(c).amiType) || (c.gpuCount > 0 ? 'AL2023_x86_64_NVIDIA' : 'AL2023_x86_64_STANDARD'),
  subnetIds: (c: ComputeRow) => {
    const ids = obj(c.spec.nodeGroup).subnetIds;
    return Array.isArray(ids) ? ids.map(String) : [];
  },
  absent: (c: ComputeRow) => c.nodegroupStatus === NODEGROUP.ABSENT,
};

/** Why a pod does not fit one of the compute's nodes; empty if it fits. */
export function fits(pod: PodRequests, c: ComputeRow): string[] {
  const reasons: string[] = [];
  if (pod.gpus > c.gpuCount) reasons.push(`it requests ${pod.gpus} GPUs, and the node has ${c.gpuCount}`);
  else if (pod.gpus && pod.vramGb > pod.gpus * c.gpuMemoryGb) {
    reasons.push(
      `it requires ${pod.vramGb} GB of GPU memory, and ${pod.gpus} of the node's GPUs have ${pod.gpus * c.gpuMemoryGb} GB`,
    );
  }
  if (pod.cpuMillicores > compute.allocatableCpu(c)) {
    reasons.push(
      `it requests ${pod.cpuMillicores}m CPU, and the node can allocate about ${compute.allocatableCpu(c)}m`,
    );
  }
  if (pod.memoryMib > compute.allocatableMemory(c)) {
    reasons.push(
      `it requests ${pod.memoryMib}Mi memory, and the node can allocate about ${compute.allocatableMemory(c)}Mi`,
    );
  }
  return reasons;
}

/** The nodes the pods need: first fit, largest pod first, by the node's allocatable capacity. */
export function nodesNeeded(pods: PodRequests[], c: ComputeRow): number {
  const nodes: number[][] = [];
  const capacity = [c.gpuCount, compute.allocatableCpu(c), compute.allocatableMemory(c)];
  const sorted = [...pods].sort(
    (a, b) => b.gpus - a.gpus || b.memoryMib - a.memoryMib || b.cpuMillicores - a.cpuMillicores,
  );
  for (const pod of sorted) {
    const need = [pod.gpus, pod.cpuMillicores, pod.memoryMib];
    const free = nodes.find((f) => need.every((n, i) => n <= (f[i] ?? 0)));
    if (free) need.forEach((n, i) => (free[i] = (free[i] ?? 0) - n));
    else nodes.push(capacity.map((cap, i) => cap - (need[i] ?? 0)));
  }
  return nodes.length;
}
