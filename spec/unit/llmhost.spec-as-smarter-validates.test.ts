/**
 * An LLMHost's spec as Smarter validates it (`smarter/smarter/apps/llmhost/manifest/models/llmhost/spec.py`, with
 * the cases of `smarter/smarter/apps/llmhost/tests/test_manifest.py`): defaults, each field's rule, and the rules of
 * compatibility, each refused with an LLMHostConfigurationError that names the field, in Smarter's words.
 */
import { parseSpec } from '../../tasks/llmhost/spec.js';
import { LLAMA_3_1_8B_INSTRUCT } from '../fixtures/llmhost-builtins.js';

const MINIMAL = { model: { repository: 'Qwen/Qwen3-8B' }, engine: { name: 'vllm' }, resources: { gpuCount: 1 } };

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const merge = (a: Obj, b: Obj): Obj =>
  Object.fromEntries(
    [...new Set([...Object.keys(a), ...Object.keys(b)])].map((k) => [
      k,
      isObj(a[k]) && isObj(b[k]) ? merge(a[k], b[k]) : k in b ? b[k] : a[k],
    ]),
  );
const spec = (overrides: Obj = {}) => parseSpec('test', merge(MINIMAL, overrides));
const refusal = (overrides: Obj) => {
  try {
    spec(overrides);
  } catch (err) {
    expect((err as Error).name).toBe('LLMHostConfigurationError');
    return (err as Error).message.replace(/^LLMHost test has an invalid spec: /, '');
  }
  throw new Error(`accepted ${JSON.stringify(overrides)}`);
};

test("Smarter's defaults: huggingface, text-generation, 50Gi ReadWriteOnce retained, 8Gi /dev/shm, one replica, 3600 s to start probed every 10 s", () => {
  const s = spec();
  expect(s.model).toMatchObject({
    source: 'huggingface',
    task: 'text-generation',
    quantization: 'none',
    revision: null,
    servedName: null,
    tokenSecret: null,
    capabilities: { streaming: true, functionCalling: false },
  });
  expect(s.engine).toMatchObject({
    name: 'vllm',
    apiFormat: 'openai_compatible',
    args: [],
    env: {},
    command: null,
    contextLength: null,
    trustRemoteCode: false,
  });
  expect(s.resources).toMatchObject({
    gpuResource: 'nvidia.com/gpu',
    shmSize: '8Gi',
    cpu: null,
    memory: null,
    nodeSelector: {},
    tolerations: [],
  });
  expect(s.storage).toMatchObject({ size: '50Gi', accessMode: 'ReadWriteOnce', retain: true, existingClaim: null });
  expect(s.network).toMatchObject({ ingress: false, hostname: null, apiKeySecret: null, allowUnauthenticated: false });
  expect(s.scaling.replicas).toBe(1);
  expect(s.healthCheck).toEqual({ path: null, startupTimeoutSeconds: 3600, periodSeconds: 10 });
  expect(s.compute).toBeNull();
  // Smarter's built-in llama-3.1-8b-instruct reads as it is.
  expect(parseSpec('llama_3_1_8b_instruct', LLAMA_3_1_8B_INSTRUCT).engine).toMatchObject({
    contextLength: 16384,
    gpuMemoryUtilization: 0.9,
    args: ['--enable-auto-tool-choice', '--tool-call-parser', 'llama3_json'],
  });
});

test('enumerations are matched case-insensitively and stored as Smarter spells them; blank tokens are unset; the hostname is lower-cased', () => {
  const s = spec({
    engine: { name: 'VLLM' },
    model: { source: 'HuggingFace', quantization: 'BF16', revision: ' ' },
    storage: { accessMode: 'readwritemany' },
    network: { hostname: 'LLM.Example.com' },
  });
  expect([
    s.engine.name,
    s.model.source,
    s.model.quantization,
    s.model.revision,
    s.storage.accessMode,
    s.network.hostname,
  ]).toEqual(['vllm', 'huggingface', 'bf16', null, 'ReadWriteMany', 'llm.example.com']);
});

test("each field's rule refuses bad input with the field's name", () => {
  expect(refusal({ engine: { name: 'pytorch' } })).toBe(
    "engine.name: must be one of ['vllm', 'tgi', 'sglang', 'llama_cpp', 'ollama', 'tei', 'custom'], not 'pytorch'.",
  );
  expect(refusal({ model: { source: 'dropbox' } })).toBe(
    "model.source: must be one of ['huggingface', 'ollama', 's3', 'url', 'pvc'], not 'dropbox'.",
  );
  expect(refusal({ model: { repository: 'Qwen/Qwen3-8B;rm -rf /' } })).toBe(
    "model.repository: 'Qwen/Qwen3-8B;rm -rf /' contains whitespace or shell characters.",
  );
  expect(refusal({ model: { repository: 'qwen3' } })).toBe(
    "model.repository: 'qwen3' is not a Hugging Face repository id, e.g. Qwen/Qwen3-8B.",
  );
  expect(refusal({ model: { revision: 'main; echo' } })).toBe(
    "model.revision: 'main; echo' contains whitespace or shell characters.",
  );
  expect(refusal({ model: { source: 's3', repository: 'bucket/prefix' } })).toBe(
    'model.repository: must be an s3:// URI when source is s3.',
  );
  expect(refusal({ model: { source: 'url', repository: 'ftp://example.com/m.gguf' } })).toBe(
    'model.repository: must be an http(s):// URL when source is url.',
  );
  expect(refusal({ model: { source: 'pvc', repository: '../escape' }, storage: { existingClaim: 'c' } })).toBe(
    'model.repository: must be a relative path within the volume.',
  );
  expect(refusal({ model: { source: 's3', repository: 's3://bucket/x', revision: 'main' } })).toBe(
    'model.revision: applies only when source is huggingface.',
  );
  expect(refusal({ engine: { env: { SMARTER_API_KEY: 'x' } } })).toBe(
    "engine.env: 'SMARTER_API_KEY': the SMARTER_ prefix is reserved.",
  );
  expect(refusal({ engine: { env: { '1BAD': 'x' } } })).toBe(
    "engine.env: '1BAD' is not a valid environment variable name.",
  );
  expect(refusal({ engine: { args: Array.from({ length: 101 }, () => '--x') } })).toBe(
    'engine.args: at most 100 are permitted.',
  );
  expect(refusal({ engine: { contextLength: 0 } })).toMatch(/^engine\.contextLength: /);
  expect(refusal({ engine: { gpuMemoryUtilization: 1.5 } })).toMatch(/^engine\.gpuMemoryUtilization: /);
  expect(refusal({ engine: { args: ['--x', 2] } })).toMatch(/^engine\.args\.1: /);
  expect(refusal({ resources: { shmSize: '8 GB' } })).toBe(
    "resources.shmSize: '8 GB' is not a Kubernetes quantity, e.g. 500m, 4 or 24Gi.",
  );
  expect(refusal({ resources: { gpuCount: 17 } })).toMatch(/^resources\.gpuCount: /);
  expect(refusal({ storage: { size: '-5Gi' } })).toBe(
    "storage.size: '-5Gi' is not a Kubernetes quantity, e.g. 500m, 4 or 24Gi.",
  );
  expect(refusal({ network: { hostname: 'https://llm.example.com' } })).toBe(
    "network.hostname: 'https://llm.example.com' is not a valid hostname.",
  );
  expect(refusal({ healthCheck: { path: 'ready' } })).toBe('healthCheck.path: must start with /.');
  expect(refusal({ healthCheck: { startupTimeoutSeconds: 30 } })).toMatch(/^healthCheck\.startupTimeoutSeconds: /);
  expect(refusal({ scaling: { replicas: 0 } })).toMatch(/^scaling\.replicas: /);
  expect(() => parseSpec('test', { engine: { name: 'vllm' } })).toThrow(
    'LLMHost test has an invalid spec: model: is required.',
  );
  expect(() => parseSpec('test', { model: { repository: 'Qwen/Qwen3-8B' }, engine: {} })).toThrow(
    'LLMHost test has an invalid spec: engine.name: is required.',
  );
});

test('the rules that make model, engine, storage and network work together, as validate_compatibility applies them', () => {
  expect(refusal({ engine: { name: 'custom' } })).toBe(
    'engine.image and engine.port: are required when engine.name is custom.',
  );
  expect(refusal({ engine: { command: ['serve'] } })).toBe(
    'engine.command: applies only when engine.name is custom. Use engine.args.',
  );
  expect(refusal({ model: { source: 'ollama', repository: 'llama3.2:1b' } })).toBe(
    "model.source: engine vllm cannot load source ollama. It supports: ['huggingface', 'pvc', 's3', 'url'].",
  );
  expect(refusal({ engine: { name: 'tei' } })).toBe('model.task: engine tei cannot serve text-generation models.');
  expect(refusal({ engine: { name: 'llama_cpp' }, resources: { gpuCount: 0 } })).toBe(
    'model.file: engine llama_cpp requires a single weights file, e.g. a GGUF file.',
  );
  expect(refusal({ resources: { gpuCount: 0 } })).toBe(
    'resources.gpuCount: engine vllm requires a GPU. For CPU, use llama_cpp or ollama, or set engine.image to a CPU build.',
  );
  expect(refusal({ model: { source: 'pvc', repository: 'models/qwen3' } })).toBe(
    'storage.existingClaim: is required when model.source is pvc.',
  );
  expect(refusal({ engine: { apiFormat: 'ollama_native' } })).toBe(
    'engine.apiFormat: vllm does not speak ollama_native.',
  );
  expect(refusal({ engine: { tensorParallelSize: 2 } })).toBe(
    'engine.tensorParallelSize: cannot exceed resources.gpuCount.',
  );
  expect(
    refusal({
      engine: { name: 'llama_cpp', gpuMemoryUtilization: 0.9 },
      model: { file: 'm.gguf' },
      resources: { gpuCount: 0 },
    }),
  ).toBe('engine.gpuMemoryUtilization: requires resources.gpuCount > 0.');
  expect(refusal({ scaling: { replicas: 2 } })).toBe(
    'scaling.replicas: more than one replica requires storage.accessMode ReadWriteMany or ReadOnlyMany.',
  );
  expect(refusal({ engine: { name: 'tgi' }, network: { ingress: true } })).toBe(
    'network.ingress: engine tgi does not authenticate requests, so a public Ingress would let anyone use the model. Use an engine that supports API keys, e.g. vllm, or set network.allowUnauthenticated: true.',
  );
  expect(refusal({ engine: { name: 'tgi' }, network: { apiKeySecret: 'my_key' } })).toBe(
    'network.apiKeySecret: engine tgi does not support API keys.',
  );
  expect(refusal({ model: { task: 'embedding', capabilities: { functionCalling: true } } })).toBe(
    'model.capabilities.functionCalling: does not apply to embedding models.',
  );
  // What Smarter accepts.
  expect(
    spec({ engine: { name: 'tgi' }, network: { ingress: true, allowUnauthenticated: true } }).network.ingress,
  ).toBe(true);
  expect(spec({ engine: { image: 'example.com/vllm-cpu:1.0' }, resources: { gpuCount: 0 } }).engine.image).toBe(
    'example.com/vllm-cpu:1.0',
  );
  expect(
    spec({
      engine: { name: 'llama_cpp' },
      model: { source: 'url', repository: 'https://example.com/m.gguf' },
      resources: { gpuCount: 0 },
    }).model.file,
  ).toBeNull();
  expect(
    spec({ engine: { name: 'custom', image: 'example.com/server:1', port: 9000, command: ['serve'] } }).engine.command,
  ).toEqual(['serve']);
});
