/**
 * What the LLMHost renderer's tests (spec/unit/llmhost.render-*-as-smarter.test.ts) compare with: a render context
 * as Smarter's `renderer.py` gets it, the parts of a rendered Deployment, and the env, mounts, probes and labels that
 * `render_container` gives every engine.
 */
import type { KubeObject } from '../../tasks/cloud/kubernetes-port.js';
import { type RenderContext } from '../../tasks/llmhost/render.js';
import { parseSpec } from '../../tasks/llmhost/spec.js';

export const BASE = 'llmhost-12-test';
export const NS = 'smarter-platform-test';
export const GPU_TAINT = { key: 'nvidia.com/gpu', value: 'true', effect: 'NoSchedule' };

export function context(spec: unknown, o: Partial<RenderContext> = {}): RenderContext {
  return {
    base: BASE,
    namespace: NS,
    spec: parseSpec('test', spec),
    servedName: 'test',
    accountNumber: '1234-5678-9012',
    hostname: null,
    clusterIssuer: 'api.example.com',
    platformName: 'smarter',
    compute: 'gpu_a10g_1x',
    taint: GPU_TAINT,
    hfToken: null,
    apiKey: null,
    ...o,
  };
}

export const byKind = (resources: KubeObject[]) =>
  Object.fromEntries(resources.map((r) => [r.kind, r])) as Record<string, KubeObject>;
export type Pod = {
  containers: Record<string, unknown>[];
  initContainers?: Record<string, unknown>[];
  [k: string]: unknown;
};
export const podOf = (resources: KubeObject[]) =>
  (byKind(resources).Deployment?.spec as { template: { spec: Pod } }).template.spec;
export const containerOf = (resources: KubeObject[]) => podOf(resources).containers[0] ?? {};

export const value = (name: string, v: string) => ({ name, value: v });
export const fromSecret = (name: string, key: string) => ({ name, valueFrom: { secretKeyRef: { name: BASE, key } } });
export const HF_ENV = [value('HF_HOME', '/models/huggingface'), value('HF_HUB_CACHE', '/models/huggingface/hub')];
export const MOUNTS = [
  { name: 'models', mountPath: '/models' },
  { name: 'dshm', mountPath: '/dev/shm' },
];
export const http = (path: string) => ({ httpGet: { path, port: 'http' } });
/** `render_container`'s probes, with the spec's default health check: 3600 s to start, every 10 s. */
export const probes = (handler: Record<string, unknown>, livenessPath = '/health') => ({
  startupProbe: { ...handler, periodSeconds: 10, timeoutSeconds: 10, failureThreshold: 360 },
  readinessProbe: { ...handler, periodSeconds: 10, timeoutSeconds: 10, failureThreshold: 3 },
  livenessProbe: { ...http(livenessPath), periodSeconds: 30, timeoutSeconds: 15, failureThreshold: 5 },
});
export const LABELS = {
  'app.kubernetes.io/name': BASE,
  'app.kubernetes.io/component': 'llmhost',
  'app.kubernetes.io/managed-by': 'smarter',
  'smarter.sh/llmhost': BASE,
  'smarter.sh/account-number': '1234-5678-9012',
};

/** How vLLM and SGLang start (`engines.py`): the model, the name it is served as, every address, the port, the revision. */
export const servedArgs = (modelFlag: string, model: string, served: string, port: string, revision?: string) => [
  modelFlag,
  model,
  '--served-model-name',
  served,
  '--host',
  '0.0.0.0',
  '--port',
  port,
  ...(revision === undefined ? [] : ['--revision', revision]),
];

/** How TGI and TEI start (`engines.py`): the model id, every address, the port, the revision. */
export const modelIdArgs = (model: string, port: string, revision?: string) => [
  '--model-id',
  model,
  '--hostname',
  '0.0.0.0',
  '--port',
  port,
  ...(revision === undefined ? [] : ['--revision', revision]),
];

/** The gated model's token, under both of the names Hugging Face's libraries read. */
export const HF_TOKEN_ENV = [fromSecret('HF_TOKEN', 'HF_TOKEN'), fromSecret('HUGGING_FACE_HUB_TOKEN', 'HF_TOKEN')];

/** `render_container`'s resources for a GPU engine: the memory limited to what it requests, the GPUs both. */
export const gpuResources = (cpu: string, memory: string, gpus: number) => ({
  requests: { cpu, memory, 'nvidia.com/gpu': gpus },
  limits: { memory, 'nvidia.com/gpu': gpus },
});

/** vLLM's arguments for Smarter's built-in llama-3.1-8b-instruct: a 16K context, and its tool calling last. */
export const LLAMA_8B_VLLM_ARGS = [
  ...servedArgs('--model', 'meta-llama/Llama-3.1-8B-Instruct', 'llama-3.1-8b-instruct', '8000', 'main'),
  '--max-model-len',
  '16384',
  '--gpu-memory-utilization',
  '0.9',
  '--enable-auto-tool-choice',
  '--tool-call-parser',
  'llama3_json',
];

/** How llama.cpp's server starts after its model (`engines.py`): the alias it serves, every address, 8080, 8K context. */
export const llamaServerArgs = (alias: string) => [
  '--alias',
  alias,
  '--host',
  '0.0.0.0',
  '--port',
  '8080',
  '--ctx-size',
  '8192',
];
