/**
 * The inference server's container, as Smarter's `render_container` (`services/renderer.py`) builds it from the
 * engine (`engines.ts`) and the resolved model (`sources.ts`).
 */
import { DEFAULT_CPU, DEFAULT_MEMORY, MODELS_MOUNT_PATH } from './const.js';
import { type Engine, getEngine } from './engines.js';
import { MODELS_VOLUME, type ResolvedModel, resolveModel } from './sources.js';
import type { LlmhostSpec } from './spec-model.js';

/** The keys of the LLMHost's Kubernetes Secret. */
export const SECRET_HF_TOKEN = 'HF_TOKEN';
export const SECRET_API_KEY = 'API_KEY';
export const CONTAINER_NAME = 'engine';
export const SHM_VOLUME = 'dshm';
/** PyTorch-based engines exchange tensors through /dev/shm, and a container's default 64 MB is too small. */
export const SHM_MOUNT_PATH = '/dev/shm';

export type EnvVar =
  { name: string; value: string } | { name: string; valueFrom: { secretKeyRef: { name: string; key: string } } };

export interface ContainerContext {
  /** The resources' base name: the Secret's name, and the slug of local model paths. */
  base: string;
  spec: LlmhostSpec;
  /** The default model name that clients send: the LLMHost's name. */
  servedName: string;
  /** Whether the Secret has a Hugging Face token. */
  hfToken: boolean;
  /** Whether the Secret has an API key. */
  apiKey: boolean;
}

export const engineOf = (spec: LlmhostSpec): Engine => getEngine(spec.engine.name);
export const modelOf = (ctx: Pick<ContainerContext, 'base' | 'spec'>): ResolvedModel =>
  resolveModel(ctx.spec.model, ctx.base);

const secretEnv = (secret: string, name: string, key: string): EnvVar => ({
  name,
  valueFrom: { secretKeyRef: { name: secret, key } },
});

export function renderContainer(ctx: ContainerContext): Record<string, unknown> {
  const { spec } = ctx;
  const engine = engineOf(spec);
  const model = modelOf(ctx);
  const servedName = engine.servedName(spec, ctx.servedName);
  const apiKey = ctx.apiKey && engine.apiKey;

  const env: EnvVar[] = Object.entries(engine.env(spec, model)).map(([name, value]) => ({ name, value }));
  if (ctx.hfToken) {
    env.push(
      secretEnv(ctx.base, 'HF_TOKEN', SECRET_HF_TOKEN),
      secretEnv(ctx.base, 'HUGGING_FACE_HUB_TOKEN', SECRET_HF_TOKEN),
    );
  }
  if (apiKey && engine.apiKeyEnv) env.push(secretEnv(ctx.base, engine.apiKeyEnv, SECRET_API_KEY));

  const { resources, healthCheck } = spec;
  const memory = resources.memory || DEFAULT_MEMORY;
  const limits: Record<string, string | number> = { memory };
  const requests: Record<string, string | number> = { cpu: resources.cpu || DEFAULT_CPU, memory };
  if (resources.gpuCount) limits[resources.gpuResource] = requests[resources.gpuResource] = resources.gpuCount;

  const period = healthCheck.periodSeconds;
  const probe = engine.probe(spec);
  const container: Record<string, unknown> = {
    name: CONTAINER_NAME,
    image: engine.image(spec),
    imagePullPolicy: 'IfNotPresent',
    args: engine.args(spec, model, servedName, apiKey),
    env,
    ports: [{ name: 'http', containerPort: engine.containerPort(spec), protocol: 'TCP' }],
    resources: { requests, limits },
    volumeMounts: [
      { name: MODELS_VOLUME, mountPath: MODELS_MOUNT_PATH },
      { name: SHM_VOLUME, mountPath: SHM_MOUNT_PATH },
    ],
    // The startup probe allows the time to download and load the weights.
    startupProbe: {
      ...probe,
      periodSeconds: period,
      timeoutSeconds: 10,
      failureThreshold: Math.ceil(healthCheck.startupTimeoutSeconds / period),
    },
    readinessProbe: { ...probe, periodSeconds: period, timeoutSeconds: 10, failureThreshold: 3 },
    // A busy server may answer its health check slowly: the liveness probe is lenient.
    livenessProbe: {
      httpGet: { path: engine.healthPathFor(spec), port: 'http' },
      periodSeconds: 30,
      timeoutSeconds: 15,
      failureThreshold: 5,
    },
  };
  const command = engine.command(spec, model);
  if (command !== null) container.command = command;
  return container;
}
