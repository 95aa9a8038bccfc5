/**
 * Smarter's `SAMLLMHostSpec` (`manifest/models/llmhost/spec.py`, constants in `manifest/models/llmhost/const.py`):
 * an LLMHost's spec as Smarter validates it each time it reads `llmhost_llmhost.spec` (`LLMHostService.spec_of`,
 * the compute's demand), with its defaults, the rules of each field (enumerations matched case-insensitively,
 * Kubernetes quantities, no shell characters in what reaches the engine's arguments) and the rules that make the
 * model, engine, storage and network work together. Fields that Smarter's model does not know pass through.
 */
import * as z from 'zod';

export const ENGINE_NAMES = ['vllm', 'tgi', 'sglang', 'llama_cpp', 'ollama', 'tei', 'custom'] as const;
export type EngineName = (typeof ENGINE_NAMES)[number];
export const MODEL_SOURCES = ['huggingface', 'ollama', 's3', 'url', 'pvc'] as const;
export type ModelSource = (typeof MODEL_SOURCES)[number];
const TASKS = ['text-generation', 'embedding'] as const;
type Task = (typeof TASKS)[number];
const QUANTIZATIONS = ['none', 'fp32', 'fp16', 'bf16', 'fp8', 'mxfp4', 'int8', 'int4', 'gguf', 'awq', 'gptq'] as const;
const API_FORMATS = ['openai_compatible', 'huggingface', 'ollama_native', 'custom'] as const;
const ACCESS_MODES = ['ReadWriteOnce', 'ReadWriteMany', 'ReadOnlyMany'] as const;

export const DEFAULT_STORAGE_SIZE = '50Gi';
export const DEFAULT_SHM_SIZE = '8Gi';
export const DEFAULT_STARTUP_TIMEOUT_SECONDS = 3600;
export const DEFAULT_PERIOD_SECONDS = 10;
export const DEFAULT_GPU_RESOURCE = 'nvidia.com/gpu';
const MAX_REPLICAS = 16;
const MAX_GPU_COUNT = 16;
const MAX_ARGS = 100;

const QUANTITY = /^[0-9]+(\.[0-9]+)?(m|k|Ki|M|Mi|G|Gi|T|Ti|P|Pi|E|Ei)?$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const HOSTNAME = /^(?=.{1,253}$)([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;
/** What may not reach an engine's command line: whitespace and the shell's metacharacters. */
const SHELL_CHARS = /[\n\r\t "'`$;&|<>]/;
/** Python's `\w` is Unicode-aware. */
const HF_REPOSITORY = /^[A-Za-z0-9][\p{L}\p{N}_.-]*\/[\p{L}\p{N}_.-]+$/u;

const HF_AND_LOCAL: readonly ModelSource[] = ['huggingface', 's3', 'url', 'pvc'];

interface EngineRule {
  sources: readonly ModelSource[];
  /** null: any task. */
  tasks: readonly Task[] | null;
  /** Whether the engine authenticates requests with an API key. */
  apiKey: boolean;
  /** Whether it loads one weights file, e.g. GGUF, rather than a directory. */
  requiresFile?: boolean;
  /** Whether its default image requires a GPU. */
  requiresGpu?: boolean;
}

/** `ENGINE_RULES`: what each engine supports. */
export const ENGINE_RULES: Record<EngineName, EngineRule> = {
  vllm: { sources: HF_AND_LOCAL, tasks: null, apiKey: true, requiresGpu: true },
  tgi: { sources: HF_AND_LOCAL, tasks: ['text-generation'], apiKey: false },
  sglang: { sources: HF_AND_LOCAL, tasks: null, apiKey: true, requiresGpu: true },
  llama_cpp: { sources: HF_AND_LOCAL, tasks: null, apiKey: true, requiresFile: true },
  ollama: { sources: ['ollama', 'huggingface'], tasks: null, apiKey: false },
  tei: { sources: HF_AND_LOCAL, tasks: ['embedding'], apiKey: true },
  custom: { sources: MODEL_SOURCES, tasks: null, apiKey: false },
};

/** A list as Python prints it, as Smarter's messages show them. */
const pyList = (xs: readonly string[]) => `[${xs.map((x) => `'${x}'`).join(', ')}]`;

/** Pydantic's required field, in Smarter's words. */
const required = { error: (issue: { input: unknown }) => (issue.input === undefined ? 'is required.' : undefined) };

/** `choice`: one of `choices`, matched case-insensitively, as it is spelled in `choices`. */
function choice<T extends string>(choices: readonly T[]) {
  return z.string(required).transform((value, ctx): T => {
    const lowered = value.trim().toLowerCase();
    const found = choices.find((c) => c.toLowerCase() === lowered);
    if (found === undefined) {
      ctx.addIssue({ code: 'custom', message: `must be one of ${pyList(choices)}, not '${lowered}'.` });
      return z.NEVER;
    }
    return found;
  });
}

/** `quantity`: a Kubernetes resource quantity, e.g. 500m, 4 or 24Gi. */
const quantity = z.string().transform((value, ctx) => {
  const v = value.trim();
  if (!QUANTITY.test(v)) {
    ctx.addIssue({ code: 'custom', message: `'${v}' is not a Kubernetes quantity, e.g. 500m, 4 or 24Gi.` });
  }
  return v;
});

const orNull = <T extends z.ZodType>(schema: T) => schema.nullish().transform((v) => v ?? null);
const optionalInt = (min: number, max = Number.MAX_SAFE_INTEGER) => orNull(z.number().int().min(min).max(max));
const optionalString = orNull(z.string());

/** `validate_token`: a revision, file or served name that reaches the engine's arguments; blank is unset. */
const token = orNull(z.string()).transform((value, ctx) => {
  if (value === null) return null;
  const v = value.trim();
  if (SHELL_CHARS.test(v)) ctx.addIssue({ code: 'custom', message: `'${v}' contains whitespace or shell characters.` });
  return v || null;
});

const repository = z.string(required).transform((value, ctx) => {
  const v = value.trim();
  if (!v) ctx.addIssue({ code: 'custom', message: 'is required.' });
  else if (SHELL_CHARS.test(v)) {
    ctx.addIssue({ code: 'custom', message: `'${v}' contains whitespace or shell characters.` });
  }
  return v;
});

const model = z
  .looseObject(
    {
      source: choice(MODEL_SOURCES).default('huggingface'),
      repository,
      revision: token,
      file: token,
      servedName: token,
      task: choice(TASKS).default('text-generation'),
      tokenSecret: optionalString,
      license: optionalString,
      architecture: optionalString,
      parameterCount: optionalInt(0),
      contextWindow: optionalInt(0),
      embeddingDimensions: optionalInt(0),
      quantization: choice(QUANTIZATIONS).default('none'),
      capabilities: z
        .looseObject({
          streaming: z.boolean().default(true),
          functionCalling: z.boolean().default(false),
          vision: z.boolean().default(false),
          reasoning: z.boolean().default(false),
        })
        .prefault({}),
    },
    required,
  )
  .superRefine((m, ctx) => {
    const at = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
    if (m.source === 'huggingface' && !HF_REPOSITORY.test(m.repository)) {
      at('repository', `'${m.repository}' is not a Hugging Face repository id, e.g. Qwen/Qwen3-8B.`);
    } else if (m.source === 's3' && !m.repository.startsWith('s3://')) {
      at('repository', 'must be an s3:// URI when source is s3.');
    } else if (m.source === 'url' && !/^https?:\/\//.test(m.repository)) {
      at('repository', 'must be an http(s):// URL when source is url.');
    } else if (m.source === 'pvc' && (m.repository.startsWith('/') || m.repository.split('/').includes('..'))) {
      at('repository', 'must be a relative path within the volume.');
    } else if (m.revision && m.source !== 'huggingface') at('revision', 'applies only when source is huggingface.');
    else if (m.task === 'embedding' && m.capabilities.functionCalling) {
      ctx.addIssue({
        code: 'custom',
        path: ['capabilities', 'functionCalling'],
        message: 'does not apply to embedding models.',
      });
    }
  });

const engine = z.looseObject(
  {
    name: choice(ENGINE_NAMES),
    image: optionalString,
    apiFormat: choice(API_FORMATS).default('openai_compatible'),
    port: optionalInt(1, 65535),
    command: orNull(z.array(z.string())),
    contextLength: optionalInt(1),
    tensorParallelSize: optionalInt(1, MAX_GPU_COUNT),
    gpuMemoryUtilization: orNull(z.number().gt(0).lte(1)),
    dtype: optionalString,
    maxConcurrentRequests: optionalInt(1),
    trustRemoteCode: z.boolean().default(false),
    args: z.array(z.string()).max(MAX_ARGS, `at most ${MAX_ARGS} are permitted.`).default([]),
    env: z
      .record(z.string(), z.string())
      .default({})
      .superRefine((env, ctx) => {
        for (const key of Object.keys(env)) {
          if (!ENV_NAME.test(key)) {
            ctx.addIssue({ code: 'custom', message: `'${key}' is not a valid environment variable name.` });
          } else if (key.startsWith('SMARTER_')) {
            ctx.addIssue({ code: 'custom', message: `'${key}': the SMARTER_ prefix is reserved.` });
          }
        }
      }),
  },
  required,
);

const resources = z
  .looseObject({
    gpuCount: z.number().int().min(0).max(MAX_GPU_COUNT).default(0),
    gpuResource: z.string().default(DEFAULT_GPU_RESOURCE),
    vramRequiredGb: optionalInt(0),
    cpu: orNull(quantity),
    memory: orNull(quantity),
    shmSize: quantity.default(DEFAULT_SHM_SIZE),
    nodeSelector: z.record(z.string(), z.string()).default({}),
    tolerations: z.array(z.record(z.string(), z.unknown())).default([]),
    serviceAccountName: optionalString,
  })
  .prefault({});

const storage = z
  .looseObject({
    size: quantity.default(DEFAULT_STORAGE_SIZE),
    storageClass: optionalString,
    accessMode: choice(ACCESS_MODES).default('ReadWriteOnce'),
    existingClaim: optionalString,
    retain: z.boolean().default(true),
  })
  .prefault({});

const network = z
  .looseObject({
    ingress: z.boolean().default(false),
    hostname: orNull(z.string()).transform((value, ctx) => {
      if (value === null) return null;
      const v = value.trim().toLowerCase();
      if (!HOSTNAME.test(v)) ctx.addIssue({ code: 'custom', message: `'${v}' is not a valid hostname.` });
      return v;
    }),
    apiKeySecret: optionalString,
    allowUnauthenticated: z.boolean().default(false),
  })
  .prefault({});

const healthCheck = z
  .looseObject({
    path: optionalString.refine((p) => p === null || p.startsWith('/'), 'must start with /.'),
    startupTimeoutSeconds: z
      .number()
      .int()
      .min(60)
      .max(6 * 3600)
      .default(DEFAULT_STARTUP_TIMEOUT_SECONDS),
    periodSeconds: z.number().int().min(1).max(300).default(DEFAULT_PERIOD_SECONDS),
  })
  .prefault({});

export const llmhostSpec = z
  .looseObject({
    model,
    engine,
    compute: optionalString,
    resources,
    storage,
    network,
    scaling: z.looseObject({ replicas: z.number().int().min(1).max(MAX_REPLICAS).default(1) }).prefault({}),
    healthCheck,
  })
  .superRefine((spec, ctx) => {
    const fail = (path: string, message: string) =>
      ctx.addIssue({ code: 'custom', path: path ? path.split('.') : [], message });
    const name = spec.engine.name;
    const rules = ENGINE_RULES[name];
    const source = spec.model.source;
    // `SAMLLMHostEngineConfig.validate_custom`
    if (name === 'custom' && (!spec.engine.image || !spec.engine.port)) {
      return fail('', 'engine.image and engine.port: are required when engine.name is custom.');
    }
    if (spec.engine.command !== null && name !== 'custom') {
      return fail('engine.command', 'applies only when engine.name is custom. Use engine.args.');
    }
    // `SAMLLMHostSpec.validate_compatibility`
    if (!rules.sources.includes(source)) {
      return fail(
        'model.source',
        `engine ${name} cannot load source ${source}. It supports: ${pyList([...rules.sources].sort())}.`,
      );
    }
    if (rules.tasks !== null && !rules.tasks.includes(spec.model.task)) {
      return fail('model.task', `engine ${name} cannot serve ${spec.model.task} models.`);
    }
    if (rules.requiresFile && !spec.model.file && source !== 'url') {
      return fail('model.file', `engine ${name} requires a single weights file, e.g. a GGUF file.`);
    }
    if (rules.requiresGpu && !spec.resources.gpuCount && !spec.engine.image) {
      return fail(
        'resources.gpuCount',
        `engine ${name} requires a GPU. For CPU, use llama_cpp or ollama, or set engine.image to a CPU build.`,
      );
    }
    if (source === 'pvc' && !spec.storage.existingClaim) {
      return fail('storage.existingClaim', 'is required when model.source is pvc.');
    }
    const format = spec.engine.apiFormat;
    if (name === 'ollama' && format !== 'openai_compatible' && format !== 'ollama_native') {
      return fail('engine.apiFormat', 'ollama speaks openai_compatible or ollama_native.');
    }
    if (format === 'ollama_native' && name !== 'ollama' && name !== 'custom') {
      return fail('engine.apiFormat', `${name} does not speak ollama_native.`);
    }
    if (spec.engine.tensorParallelSize && spec.engine.tensorParallelSize > Math.max(spec.resources.gpuCount, 1)) {
      return fail('engine.tensorParallelSize', 'cannot exceed resources.gpuCount.');
    }
    if (spec.engine.gpuMemoryUtilization && !spec.resources.gpuCount) {
      return fail('engine.gpuMemoryUtilization', 'requires resources.gpuCount > 0.');
    }
    if (spec.scaling.replicas > 1 && spec.storage.accessMode === 'ReadWriteOnce' && !spec.storage.existingClaim) {
      return fail(
        'scaling.replicas',
        'more than one replica requires storage.accessMode ReadWriteMany or ReadOnlyMany.',
      );
    }
    if (spec.network.ingress && !spec.network.allowUnauthenticated && !rules.apiKey) {
      return fail(
        'network.ingress',
        `engine ${name} does not authenticate requests, so a public Ingress would let anyone use the model. Use an engine that supports API keys, e.g. vllm, or set network.allowUnauthenticated: true.`,
      );
    }
    if (spec.network.apiKeySecret && !rules.apiKey) {
      return fail('network.apiKeySecret', `engine ${name} does not support API keys.`);
    }
  });

export type LlmhostSpec = z.output<typeof llmhostSpec>;
