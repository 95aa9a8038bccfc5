/**
 * The inference servers, as Smarter's `services/engines.py` turns the engine-neutral `spec.engine` settings (e.g.
 * `contextLength`) and the resolved model into each one's container: image, port, command, arguments, environment
 * and probe. `spec.engine.args` and `spec.engine.env` are added as they are, for everything else.
 *
 * Secrets never appear in arguments: the renderer injects `HF_TOKEN` and the API key, as `apiKeyEnv`, from the
 * LLMHost's Kubernetes Secret, and an engine that takes its key as an argument refers to the variable with
 * Kubernetes' `$(VAR)` expansion.
 */
import { MODELS_MOUNT_PATH } from './const.js';
import { ENGINE_RULES, type EngineName, type LlmhostSpec } from './spec-model.js';
import { type ResolvedModel, joinPath, modelPath } from './sources.js';
import { LLMHostConfigurationError } from './spec.js';

/** The server listens on every interface of the pod, so that its Service reaches it. */
export const CONTAINER_BIND_ADDRESS = '0.0.0.0';
/** The variable with the API key, for engines that take it as an argument. */
export const API_KEY_ENV = 'SMARTER_API_KEY';
const HF_HOME = joinPath(MODELS_MOUNT_PATH, 'huggingface');

/** The engines' official images, which float with their releases (`const.py`). */
export const DEFAULT_IMAGES: Record<Exclude<EngineName, 'custom'>, string> = {
  vllm: 'vllm/vllm-openai:latest',
  tgi: 'ghcr.io/huggingface/text-generation-inference:latest',
  sglang: 'lmsysorg/sglang:latest',
  llama_cpp: 'ghcr.io/ggml-org/llama.cpp:server-cuda',
  ollama: 'ollama/ollama:latest',
  tei: 'ghcr.io/huggingface/text-embeddings-inference:latest',
};
/** The images of the engines that have a separate build for CPU-only nodes. */
export const DEFAULT_CPU_IMAGES: Partial<Record<EngineName, string>> = {
  llama_cpp: 'ghcr.io/ggml-org/llama.cpp:server',
  tei: 'ghcr.io/huggingface/text-embeddings-inference:cpu-latest',
};

export type ProbeHandler = { httpGet: { path: string; port: string } } | { exec: { command: string[] } };

/**
 * A float as Python's `str()` writes it, as the engine's argument: `1.0`, `0.85`, `1e-05`.
 * (JavaScript writes 1 and 0.00001.)
 */
export function pythonFloat(v: number): string {
  if (!Number.isFinite(v)) return String(v);
  if (Number.isInteger(v) && Math.abs(v) < 1e16) return `${v}.0`;
  const exponent = Math.floor(Math.log10(Math.abs(v)));
  if (exponent >= -4 && exponent < 16) return String(v);
  const [mantissa, e = '0'] = v.toExponential().split('e');
  const n = Number(e);
  return `${mantissa}e${n < 0 ? '-' : '+'}${String(Math.abs(n)).padStart(2, '0')}`;
}

/** `flag`: `name value` when the value is set. */
function flag(args: string[], name: string, value: string | number | null | undefined): void {
  if (value !== null && value !== undefined) args.push(name, String(value));
}

const float = (v: number | null) => (v === null ? null : pythonFloat(v));

/** `Engine`: the defaults, which each engine overrides. */
export class Engine {
  readonly port: number = 8000;
  readonly healthPath: string = '/health';
  readonly openaiPath: string = '/v1';
  /** The variable that the engine reads its API key from. */
  readonly apiKeyEnv: string | null = null;

  constructor(readonly name: EngineName) {}

  /** `supports_api_key`: whether the engine authenticates requests with an API key. */
  get apiKey(): boolean {
    return ENGINE_RULES[this.name].apiKey;
  }

  /** `spec.engine.image`, else the official image for GPU or CPU nodes. */
  image(spec: LlmhostSpec): string {
    if (spec.engine.image) return spec.engine.image;
    const cpu = DEFAULT_CPU_IMAGES[this.name];
    if (!spec.resources.gpuCount && cpu) return cpu;
    return this.name === 'custom' ? '' : DEFAULT_IMAGES[this.name];
  }

  containerPort(spec: LlmhostSpec): number {
    return spec.engine.port || this.port;
  }

  /** The model name that clients send. */
  servedName(spec: LlmhostSpec, fallback: string): string {
    return spec.model.servedName || fallback;
  }

  /** The image's entrypoint, replaced when not null. */
  command(spec: LlmhostSpec, _model: ResolvedModel): string[] | null {
    return spec.engine.command;
  }

  /** The arguments that name the model to load. */
  protected modelArgs(_spec: LlmhostSpec, _model: ResolvedModel, _servedName: string): string[] {
    return [];
  }

  /** The arguments of the common settings, e.g. contextLength. */
  protected settingArgs(_spec: LlmhostSpec): string[] {
    return [];
  }

  /** The arguments that pass the API key, for engines that do not read it from the environment. */
  protected apiKeyArgs(): string[] {
    return [];
  }

  args(spec: LlmhostSpec, model: ResolvedModel, servedName: string, apiKey: boolean): string[] {
    return [
      ...this.modelArgs(spec, model, servedName),
      ...this.settingArgs(spec),
      ...(apiKey ? this.apiKeyArgs() : []),
      ...spec.engine.args,
    ];
  }

  /** The variables other than secrets; `spec.engine.env` overrides them. */
  env(spec: LlmhostSpec, _model: ResolvedModel): Record<string, string> {
    return { HF_HOME, HF_HUB_CACHE: joinPath(HF_HOME, 'hub'), ...spec.engine.env };
  }

  /** The handler of the startup and readiness probes. */
  probe(spec: LlmhostSpec): ProbeHandler {
    return { httpGet: { path: this.healthPathFor(spec), port: 'http' } };
  }

  healthPathFor(spec: LlmhostSpec): string {
    return spec.healthCheck.path || this.healthPath;
  }
}

/**
 * The model by path when it is on the volume, else by reference, and the name it is served as (vLLM, SGLang); then
 * where to listen.
 */
const loadAndListen = (flagName: string, hostFlag: string, port: number, model: ResolvedModel, servedName?: string) => [
  flagName,
  model.local ? modelPath(model) : model.reference,
  ...(servedName === undefined ? [] : ['--served-model-name', servedName]),
  hostFlag,
  CONTAINER_BIND_ADDRESS,
  '--port',
  String(port),
];

/** The model arguments of an engine that loads a remote model at a revision. */
function remoteModelArgs(model: ResolvedModel, args: string[]): string[] {
  if (!model.local) flag(args, '--revision', model.revision);
  return args;
}

/**
 * vLLM's and SGLang's common settings, in one order; each names its flags for the context length, the tensor
 * parallelism, the GPU memory fraction and the concurrent requests.
 */
function servingSettings(
  e: LlmhostSpec['engine'],
  [contextLength, tensorParallel, gpuMemory, maxRequests]: readonly [string, string, string, string],
): string[] {
  const args: string[] = [];
  flag(args, contextLength, e.contextLength);
  flag(args, tensorParallel, e.tensorParallelSize);
  flag(args, gpuMemory, float(e.gpuMemoryUtilization));
  flag(args, '--dtype', e.dtype);
  flag(args, maxRequests, e.maxConcurrentRequests);
  if (e.trustRemoteCode) args.push('--trust-remote-code');
  return args;
}

/** Each one's flags for `servingSettings`. */
const VLLM_SETTINGS = [
  '--max-model-len',
  '--tensor-parallel-size',
  '--gpu-memory-utilization',
  '--max-num-seqs',
] as const;
const SGLANG_SETTINGS = ['--context-length', '--tp', '--mem-fraction-static', '--max-running-requests'] as const;

class VllmEngine extends Engine {
  override readonly apiKeyEnv = 'VLLM_API_KEY';
  protected override modelArgs(spec: LlmhostSpec, model: ResolvedModel, servedName: string): string[] {
    return remoteModelArgs(model, loadAndListen('--model', '--host', this.containerPort(spec), model, servedName));
  }
  protected override settingArgs(spec: LlmhostSpec): string[] {
    return servingSettings(spec.engine, VLLM_SETTINGS);
  }
}

/** Hugging Face Text Generation Inference. */
class TgiEngine extends Engine {
  override readonly port = 80;
  protected override modelArgs(spec: LlmhostSpec, model: ResolvedModel): string[] {
    return remoteModelArgs(model, loadAndListen('--model-id', '--hostname', this.containerPort(spec), model));
  }
  protected override settingArgs(spec: LlmhostSpec): string[] {
    const e = spec.engine;
    const args: string[] = [];
    flag(args, '--max-total-tokens', e.contextLength);
    // TGI requires the input to leave room for at least one generated token.
    if (e.contextLength) flag(args, '--max-input-tokens', e.contextLength - 1);
    flag(args, '--num-shard', e.tensorParallelSize);
    flag(args, '--dtype', e.dtype);
    flag(args, '--max-concurrent-requests', e.maxConcurrentRequests);
    if (e.trustRemoteCode) args.push('--trust-remote-code');
    return args;
  }
}

class SglangEngine extends Engine {
  override readonly port = 30000;
  override readonly apiKeyEnv = API_KEY_ENV;
  override command(): string[] {
    return ['python3', '-m', 'sglang.launch_server'];
  }
  protected override modelArgs(spec: LlmhostSpec, model: ResolvedModel, servedName: string): string[] {
    return remoteModelArgs(model, loadAndListen('--model-path', '--host', this.containerPort(spec), model, servedName));
  }
  protected override settingArgs(spec: LlmhostSpec): string[] {
    return servingSettings(spec.engine, SGLANG_SETTINGS);
  }
  protected override apiKeyArgs(): string[] {
    return ['--api-key', `$(${API_KEY_ENV})`];
  }
}

/** llama.cpp's llama-server, for GGUF models, on CPU or GPU. */
class LlamaCppEngine extends Engine {
  override readonly port = 8080;
  override readonly apiKeyEnv = 'LLAMA_API_KEY';
  protected override modelArgs(spec: LlmhostSpec, model: ResolvedModel, servedName: string): string[] {
    const args = model.local
      ? ['--model', modelPath(model)]
      : ['--hf-repo', model.reference, '--hf-file', String(model.file)];
    args.push('--alias', servedName, '--host', CONTAINER_BIND_ADDRESS, '--port', String(this.containerPort(spec)));
    if (spec.model.task === 'embedding') args.push('--embedding');
    return args;
  }
  protected override settingArgs(spec: LlmhostSpec): string[] {
    const args: string[] = [];
    flag(args, '--ctx-size', spec.engine.contextLength);
    flag(args, '--parallel', spec.engine.maxConcurrentRequests);
    if (spec.resources.gpuCount) args.push('--n-gpu-layers', '999');
    return args;
  }
  override env(spec: LlmhostSpec, model: ResolvedModel): Record<string, string> {
    return { LLAMA_CACHE: joinPath(MODELS_MOUNT_PATH, 'llama.cpp'), ...super.env(spec, model) };
  }
}

/** The variable that names the model which the Ollama container pulls. */
export const OLLAMA_MODEL_ENV = 'SMARTER_OLLAMA_MODEL';

/** Ollama: the container serves, then pulls the model; the probes run `ollama show`, so a replica is ready once it is pulled. */
class OllamaEngine extends Engine {
  override readonly port = 11434;
  override readonly healthPath = '/';

  /** The Ollama tag; a Hugging Face GGUF repository is pulled as hf.co/<repository>[:<quantization>]. */
  static tag(source: string, reference: string, file: string | null): string {
    return source === 'huggingface' ? `hf.co/${reference}${file ? `:${file}` : ''}` : reference;
  }
  // Ollama names models by their tag.
  override servedName(spec: LlmhostSpec): string {
    return OllamaEngine.tag(spec.model.source, spec.model.repository, spec.model.file);
  }
  override command(): string[] {
    const script = `ollama serve & pid=$!; until ollama list >/dev/null 2>&1; do sleep 1; done; ollama pull "$${OLLAMA_MODEL_ENV}" && wait $pid`;
    return ['/bin/sh', '-c', script];
  }
  override env(spec: LlmhostSpec, model: ResolvedModel): Record<string, string> {
    const env: Record<string, string> = {
      OLLAMA_HOST: `0.0.0.0:${this.containerPort(spec)}`,
      OLLAMA_MODELS: joinPath(MODELS_MOUNT_PATH, 'ollama'),
      OLLAMA_KEEP_ALIVE: '-1',
      [OLLAMA_MODEL_ENV]: OllamaEngine.tag(model.source, model.reference, model.file),
    };
    if (spec.engine.contextLength) env.OLLAMA_CONTEXT_LENGTH = String(spec.engine.contextLength);
    if (spec.engine.maxConcurrentRequests) env.OLLAMA_NUM_PARALLEL = String(spec.engine.maxConcurrentRequests);
    return { ...env, ...spec.engine.env };
  }
  override probe(): ProbeHandler {
    return { exec: { command: ['/bin/sh', '-c', `ollama show "$${OLLAMA_MODEL_ENV}" >/dev/null`] } };
  }
}

/** Hugging Face Text Embeddings Inference. */
class TeiEngine extends Engine {
  override readonly port = 80;
  override readonly apiKeyEnv = 'API_KEY';
  protected override modelArgs(spec: LlmhostSpec, model: ResolvedModel): string[] {
    return remoteModelArgs(model, loadAndListen('--model-id', '--hostname', this.containerPort(spec), model));
  }
  protected override settingArgs(spec: LlmhostSpec): string[] {
    const args: string[] = [];
    flag(args, '--max-concurrent-requests', spec.engine.maxConcurrentRequests);
    flag(args, '--dtype', spec.engine.dtype);
    return args;
  }
}

/** Any other image: only `spec.engine.command`, `args` and `env`. */
class CustomEngine extends Engine {
  override image(spec: LlmhostSpec): string {
    if (!spec.engine.image) {
      throw new LLMHostConfigurationError('engine.image: is required when engine.name is custom.');
    }
    return spec.engine.image;
  }
}

const ENGINES: Record<EngineName, Engine> = {
  vllm: new VllmEngine('vllm'),
  tgi: new TgiEngine('tgi'),
  sglang: new SglangEngine('sglang'),
  llama_cpp: new LlamaCppEngine('llama_cpp'),
  ollama: new OllamaEngine('ollama'),
  tei: new TeiEngine('tei'),
  custom: new CustomEngine('custom'),
};

/** `get_engine`. */
export function getEngine(name: string): Engine {
  const engine = ENGINES[name as EngineName] as Engine | undefined;
  if (!engine) throw new LLMHostConfigurationError(`engine.name: ${name} is not supported.`);
  return engine;
}
