/**
 * An LLMHost's container and Deployment, per engine, compared with what Smarter's renderer produces for the same
 * spec: the expected objects are written by hand from `smarter/smarter/apps/llmhost/services/renderer.py`,
 * `services/engines.py` and `services/sources.py`; the specs are Smarter's built-in LLMHosts
 * (`smarter/smarter/apps/llmhost/data/llmhost/*.yaml`, in `spec/fixtures/llmhost-builtins.ts`).
 */
import type { KubeObject } from '../../tasks/cloud/kubernetes-port.js';
import { pythonFloat } from '../../tasks/llmhost/engines.js';
import { type RenderContext, endpoints, renderResources } from '../../tasks/llmhost/render.js';
import { parseSpec } from '../../tasks/llmhost/spec.js';
import {
  BGE_M3_TEI,
  GGUF_URL,
  LLAMA_3_1_8B_INSTRUCT,
  LLAMA_CPP_CPU,
  LLAMA_CPP_URL,
  OLLAMA_CPU,
  QWEN_SGLANG,
  QWEN_TGI,
} from '../fixtures/llmhost-builtins.js';

const BASE = 'llmhost-12-test';
const NS = 'smarter-platform-test';
const GPU_TAINT = { key: 'nvidia.com/gpu', value: 'true', effect: 'NoSchedule' };

function context(spec: unknown, o: Partial<RenderContext> = {}): RenderContext {
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

const byKind = (resources: KubeObject[]) =>
  Object.fromEntries(resources.map((r) => [r.kind, r])) as Record<string, KubeObject>;
type Pod = { containers: Record<string, unknown>[]; initContainers?: Record<string, unknown>[]; [k: string]: unknown };
const podOf = (resources: KubeObject[]) =>
  (byKind(resources).Deployment?.spec as { template: { spec: Pod } }).template.spec;
const containerOf = (resources: KubeObject[]) => podOf(resources).containers[0] ?? {};

const value = (name: string, v: string) => ({ name, value: v });
const fromSecret = (name: string, key: string) => ({ name, valueFrom: { secretKeyRef: { name: BASE, key } } });
const HF_ENV = [value('HF_HOME', '/models/huggingface'), value('HF_HUB_CACHE', '/models/huggingface/hub')];
const MOUNTS = [
  { name: 'models', mountPath: '/models' },
  { name: 'dshm', mountPath: '/dev/shm' },
];
const http = (path: string) => ({ httpGet: { path, port: 'http' } });
/** `render_container`'s probes, with the spec's default health check: 3600 s to start, every 10 s. */
const probes = (handler: Record<string, unknown>, livenessPath = '/health') => ({
  startupProbe: { ...handler, periodSeconds: 10, timeoutSeconds: 10, failureThreshold: 360 },
  readinessProbe: { ...handler, periodSeconds: 10, timeoutSeconds: 10, failureThreshold: 3 },
  livenessProbe: { ...http(livenessPath), periodSeconds: 30, timeoutSeconds: 15, failureThreshold: 5 },
});
const LABELS = {
  'app.kubernetes.io/name': BASE,
  'app.kubernetes.io/component': 'llmhost',
  'app.kubernetes.io/managed-by': 'smarter',
  'smarter.sh/llmhost': BASE,
  'smarter.sh/account-number': '1234-5678-9012',
};

test("vLLM: Smarter's built-in llama-3.1-8b-instruct renders the Deployment Smarter renders: --max-model-len 16384, its tool-calling args last, the token and key from the Secret", () => {
  const resources = renderResources(
    context(LLAMA_3_1_8B_INSTRUCT, {
      servedName: 'llama_3_1_8b_instruct',
      hostname: 'llm.example.com',
      hfToken: 'hf_secret',
      apiKey: 'api_secret',
    }),
  );
  expect(resources.map((r) => r.kind)).toEqual(['PersistentVolumeClaim', 'Secret', 'Deployment', 'Service', 'Ingress']);
  const { Secret, PersistentVolumeClaim, Deployment } = byKind(resources);
  expect(Secret?.stringData).toEqual({ HF_TOKEN: 'hf_secret', API_KEY: 'api_secret' });
  expect(JSON.stringify(Deployment)).not.toMatch(/hf_secret|api_secret/);
  // The spec's storage is Smarter's default: 50Gi.
  expect(PersistentVolumeClaim?.spec).toEqual({
    accessModes: ['ReadWriteOnce'],
    resources: { requests: { storage: '50Gi' } },
  });
  expect(Deployment).toEqual({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: BASE, namespace: NS, labels: LABELS },
    spec: {
      replicas: 1,
      strategy: { type: 'Recreate' },
      progressDeadlineSeconds: 4200,
      selector: { matchLabels: { 'smarter.sh/llmhost': BASE } },
      template: {
        metadata: { labels: { ...LABELS, 'smarter.sh/compute': 'gpu_a10g_1x' } },
        spec: {
          securityContext: { fsGroup: 1000, fsGroupChangePolicy: 'OnRootMismatch' },
          terminationGracePeriodSeconds: 60,
          containers: [
            {
              name: 'engine',
              image: 'vllm/vllm-openai:latest',
              imagePullPolicy: 'IfNotPresent',
              args: [
                '--model',
                'meta-llama/Llama-3.1-8B-Instruct',
                '--served-model-name',
                'llama-3.1-8b-instruct',
                '--host',
                '0.0.0.0',
                '--port',
                '8000',
                '--revision',
                'main',
                '--max-model-len',
                '16384',
                '--gpu-memory-utilization',
                '0.9',
                '--enable-auto-tool-choice',
                '--tool-call-parser',
                'llama3_json',
              ],
              env: [
                ...HF_ENV,
                fromSecret('HF_TOKEN', 'HF_TOKEN'),
                fromSecret('HUGGING_FACE_HUB_TOKEN', 'HF_TOKEN'),
                fromSecret('VLLM_API_KEY', 'API_KEY'),
              ],
              ports: [{ name: 'http', containerPort: 8000, protocol: 'TCP' }],
              resources: {
                requests: { cpu: '4', memory: '24Gi', 'nvidia.com/gpu': 1 },
                limits: { memory: '24Gi', 'nvidia.com/gpu': 1 },
              },
              volumeMounts: MOUNTS,
              ...probes(http('/health')),
            },
          ],
          volumes: [
            { name: 'models', persistentVolumeClaim: { claimName: `${BASE}-models` } },
            { name: 'dshm', emptyDir: { medium: 'Memory', sizeLimit: '8Gi' } },
          ],
          nodeSelector: { 'smarter.sh/compute': 'gpu_a10g_1x' },
          // The GPU compute's taint is the GPU resource's: tolerated once.
          tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }],
        },
      },
    },
  });
  expect(endpoints(context(LLAMA_3_1_8B_INSTRUCT, { hostname: 'llm.example.com' }))).toEqual({
    endpoint: `http://${BASE}.${NS}.svc.cluster.local/v1`,
    healthCheckUrl: `http://${BASE}.${NS}.svc.cluster.local/health`,
    publicUrl: 'https://llm.example.com/v1',
  });
});

test("vLLM: every common setting becomes its flag, a float as Python writes it; unset settings add none; the served name defaults to the LLMHost's name", () => {
  const spec = {
    model: { repository: 'Qwen/Qwen3-8B' },
    engine: {
      name: 'vllm',
      contextLength: 8192,
      tensorParallelSize: 2,
      gpuMemoryUtilization: 1,
      dtype: 'bfloat16',
      maxConcurrentRequests: 64,
      trustRemoteCode: true,
      args: ['--enable-prefix-caching'],
    },
    resources: { gpuCount: 2 },
  };
  expect(containerOf(renderResources(context(spec))).args).toEqual([
    '--model',
    'Qwen/Qwen3-8B',
    '--served-model-name',
    'test',
    '--host',
    '0.0.0.0',
    '--port',
    '8000',
    '--revision',
    'main',
    '--max-model-len',
    '8192',
    '--tensor-parallel-size',
    '2',
    '--gpu-memory-utilization',
    '1.0',
    '--dtype',
    'bfloat16',
    '--max-num-seqs',
    '64',
    '--trust-remote-code',
    '--enable-prefix-caching',
  ]);
  expect(
    containerOf(
      renderResources(
        context({
          model: { repository: 'Qwen/Qwen3-8B', revision: 'abc123' },
          engine: { name: 'vllm' },
          resources: { gpuCount: 1 },
        }),
      ),
    ).args,
  ).toEqual([
    '--model',
    'Qwen/Qwen3-8B',
    '--served-model-name',
    'test',
    '--host',
    '0.0.0.0',
    '--port',
    '8000',
    '--revision',
    'abc123',
  ]);
  expect([1, 0.85, 0.9, 0.0001, 0.00001, 1e-7].map(pythonFloat)).toEqual([
    '1.0',
    '0.85',
    '0.9',
    '0.0001',
    '1e-05',
    '1e-07',
  ]);
});

test("TGI: Smarter's built-in qwen2.5-1.5b-instruct-tgi: --max-input-tokens one less than --max-total-tokens, port 80, no API key even when one is given", () => {
  const container = containerOf(renderResources(context(QWEN_TGI, { compute: 'gpu_l4_1x', apiKey: 'ignored' })));
  expect(container).toEqual({
    name: 'engine',
    image: 'ghcr.io/huggingface/text-generation-inference:latest',
    imagePullPolicy: 'IfNotPresent',
    args: [
      '--model-id',
      'Qwen/Qwen2.5-1.5B-Instruct',
      '--hostname',
      '0.0.0.0',
      '--port',
      '80',
      '--revision',
      'main',
      '--max-total-tokens',
      '8192',
      '--max-input-tokens',
      '8191',
      '--max-concurrent-requests',
      '128',
    ],
    env: HF_ENV,
    ports: [{ name: 'http', containerPort: 80, protocol: 'TCP' }],
    resources: {
      requests: { cpu: '4', memory: '8Gi', 'nvidia.com/gpu': 1 },
      limits: { memory: '8Gi', 'nvidia.com/gpu': 1 },
    },
    volumeMounts: MOUNTS,
    ...probes(http('/health')),
  });
  const shard = containerOf(
    renderResources(
      context({ ...QWEN_TGI, engine: { name: 'tgi', tensorParallelSize: 1, dtype: 'float16', trustRemoteCode: true } }),
    ),
  );
  expect(shard.args).toEqual([
    '--model-id',
    'Qwen/Qwen2.5-1.5B-Instruct',
    '--hostname',
    '0.0.0.0',
    '--port',
    '80',
    '--revision',
    'main',
    '--num-shard',
    '1',
    '--dtype',
    'float16',
    '--trust-remote-code',
  ]);
});

test("SGLang: Smarter's built-in qwen2.5-7b-instruct-sglang: python3 -m sglang.launch_server, --mem-fraction-static, and the key as --api-key $(SMARTER_API_KEY)", () => {
  const container = containerOf(renderResources(context(QWEN_SGLANG, { apiKey: 'k' })));
  expect(container).toEqual({
    name: 'engine',
    image: 'lmsysorg/sglang:latest',
    imagePullPolicy: 'IfNotPresent',
    command: ['python3', '-m', 'sglang.launch_server'],
    args: [
      '--model-path',
      'Qwen/Qwen2.5-7B-Instruct',
      '--served-model-name',
      'qwen2.5-7b-instruct',
      '--host',
      '0.0.0.0',
      '--port',
      '30000',
      '--revision',
      'main',
      '--context-length',
      '16384',
      '--mem-fraction-static',
      '0.85',
      '--api-key',
      '$(SMARTER_API_KEY)',
    ],
    env: [...HF_ENV, fromSecret('SMARTER_API_KEY', 'API_KEY')],
    ports: [{ name: 'http', containerPort: 30000, protocol: 'TCP' }],
    resources: {
      requests: { cpu: '4', memory: '23Gi', 'nvidia.com/gpu': 1 },
      limits: { memory: '23Gi', 'nvidia.com/gpu': 1 },
    },
    volumeMounts: MOUNTS,
    ...probes(http('/health')),
  });
});

test("llama.cpp: Smarter's built-in llama-3.2-3b-instruct-gguf-cpu downloads one file from Hugging Face, with the CPU image, LLAMA_CACHE and LLAMA_API_KEY, tolerating its CPU compute's taint", () => {
  const taint = { key: 'smarter.sh/compute', value: 'cpu_medium', effect: 'NoSchedule' };
  const resources = renderResources(context(LLAMA_CPP_CPU, { compute: 'cpu_medium', taint, apiKey: 'k' }));
  expect(containerOf(resources)).toEqual({
    name: 'engine',
    image: 'ghcr.io/ggml-org/llama.cpp:server',
    imagePullPolicy: 'IfNotPresent',
    args: [
      '--hf-repo',
      'bartowski/Llama-3.2-3B-Instruct-GGUF',
      '--hf-file',
      'Llama-3.2-3B-Instruct-Q4_K_M.gguf',
      '--alias',
      'llama-3.2-3b-instruct',
      '--host',
      '0.0.0.0',
      '--port',
      '8080',
      '--ctx-size',
      '8192',
      '--parallel',
      '4',
    ],
    env: [value('LLAMA_CACHE', '/models/llama.cpp'), ...HF_ENV, fromSecret('LLAMA_API_KEY', 'API_KEY')],
    ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
    resources: { requests: { cpu: '7', memory: '8Gi' }, limits: { memory: '8Gi' } },
    volumeMounts: MOUNTS,
    ...probes(http('/health')),
  });
  const pod = podOf(resources);
  expect(pod.tolerations).toEqual([{ key: 'smarter.sh/compute', operator: 'Exists', effect: 'NoSchedule' }]);
  expect(pod.volumes).toEqual([
    { name: 'models', persistentVolumeClaim: { claimName: `${BASE}-models` } },
    { name: 'dshm', emptyDir: { medium: 'Memory', sizeLimit: '1Gi' } },
  ]);
  expect(pod.initContainers).toBeUndefined();
  // On a GPU, every layer is offloaded.
  const gpu = containerOf(renderResources(context({ ...LLAMA_CPP_CPU, resources: { gpuCount: 1 } })));
  expect(gpu.args).toEqual(expect.arrayContaining(['--n-gpu-layers', '999']));
  expect(gpu.image).toBe('ghcr.io/ggml-org/llama.cpp:server-cuda');
});

test("llama.cpp from a URL: Smarter's built-in llama-3.2-1b-instruct-gguf-url downloads the file in a curl init container to /models/local/<base>/, and loads it from there", () => {
  const path = `/models/local/${BASE}/Llama-3.2-1B-Instruct-Q4_K_M.gguf`;
  const resources = renderResources(context(LLAMA_CPP_URL, { compute: 'cpu_small', taint: null }));
  const pod = podOf(resources);
  expect(pod.initContainers).toEqual([
    {
      name: 'download-model',
      image: 'curlimages/curl:latest',
      command: [
        '/bin/sh',
        '-c',
        'test -s "$2" || { mkdir -p "$(dirname "$2")" && curl -fsSL -o "$2.partial" "$1" && mv "$2.partial" "$2"; }',
        'download',
        GGUF_URL,
        path,
      ],
      volumeMounts: [{ name: 'models', mountPath: '/models' }],
    },
  ]);
  expect(containerOf(resources).args).toEqual([
    '--model',
    path,
    '--alias',
    'llama-3.2-1b-instruct',
    '--host',
    '0.0.0.0',
    '--port',
    '8080',
    '--ctx-size',
    '8192',
  ]);
  expect(pod.tolerations).toBeUndefined();
  expect(byKind(resources).PersistentVolumeClaim?.spec).toEqual({
    accessModes: ['ReadWriteOnce'],
    resources: { requests: { storage: '5Gi' } },
  });
});

test("Ollama: Smarter's built-in llama3.2-3b-ollama-cpu serves, then pulls $SMARTER_OLLAMA_MODEL; no args; its settings in OLLAMA_*; probed by `ollama show`; its health path /", () => {
  const ctx = context(OLLAMA_CPU, { compute: 'cpu_medium', taint: null });
  expect(containerOf(renderResources(ctx))).toEqual({
    name: 'engine',
    image: 'ollama/ollama:latest',
    imagePullPolicy: 'IfNotPresent',
    command: [
      '/bin/sh',
      '-c',
      'ollama serve & pid=$!; until ollama list >/dev/null 2>&1; do sleep 1; done; ollama pull "$SMARTER_OLLAMA_MODEL" && wait $pid',
    ],
    args: [],
    env: [
      value('OLLAMA_HOST', '0.0.0.0:11434'),
      value('OLLAMA_MODELS', '/models/ollama'),
      value('OLLAMA_KEEP_ALIVE', '-1'),
      value('SMARTER_OLLAMA_MODEL', 'llama3.2:3b'),
      value('OLLAMA_CONTEXT_LENGTH', '8192'),
      value('OLLAMA_NUM_PARALLEL', '4'),
    ],
    ports: [{ name: 'http', containerPort: 11434, protocol: 'TCP' }],
    resources: { requests: { cpu: '7', memory: '8Gi' }, limits: { memory: '8Gi' } },
    volumeMounts: MOUNTS,
    ...probes({ exec: { command: ['/bin/sh', '-c', 'ollama show "$SMARTER_OLLAMA_MODEL" >/dev/null'] } }, '/'),
  });
  expect(endpoints(ctx).healthCheckUrl).toBe(`http://${BASE}.${NS}.svc.cluster.local/`);
  // A Hugging Face GGUF repository is pulled as hf.co/<repository>:<quantization>.
  const hf = containerOf(
    renderResources(
      context({
        model: { repository: 'bartowski/Llama-3.2-1B-Instruct-GGUF', file: 'Q4_K_M' },
        engine: { name: 'ollama', env: { OLLAMA_DEBUG: '1' } },
      }),
    ),
  );
  expect(hf.env).toEqual([
    value('OLLAMA_HOST', '0.0.0.0:11434'),
    value('OLLAMA_MODELS', '/models/ollama'),
    value('OLLAMA_KEEP_ALIVE', '-1'),
    value('SMARTER_OLLAMA_MODEL', 'hf.co/bartowski/Llama-3.2-1B-Instruct-GGUF:Q4_K_M'),
    value('OLLAMA_DEBUG', '1'),
  ]);
});

test("TEI: Smarter's built-in bge-m3 with --max-concurrent-requests and the key as API_KEY; the CPU build without a GPU", () => {
  expect(containerOf(renderResources(context(BGE_M3_TEI, { compute: 'gpu_l4_1x', apiKey: 'k' })))).toEqual({
    name: 'engine',
    image: 'ghcr.io/huggingface/text-embeddings-inference:latest',
    imagePullPolicy: 'IfNotPresent',
    args: [
      '--model-id',
      'BAAI/bge-m3',
      '--hostname',
      '0.0.0.0',
      '--port',
      '80',
      '--revision',
      'main',
      '--max-concurrent-requests',
      '512',
    ],
    env: [...HF_ENV, fromSecret('API_KEY', 'API_KEY')],
    ports: [{ name: 'http', containerPort: 80, protocol: 'TCP' }],
    resources: {
      requests: { cpu: '4', memory: '8Gi', 'nvidia.com/gpu': 1 },
      limits: { memory: '8Gi', 'nvidia.com/gpu': 1 },
    },
    volumeMounts: MOUNTS,
    ...probes(http('/health')),
  });
  const cpu = containerOf(
    renderResources(context({ ...BGE_M3_TEI, engine: { name: 'tei', dtype: 'float32' }, resources: {} })),
  );
  expect(cpu.image).toBe('ghcr.io/huggingface/text-embeddings-inference:cpu-latest');
  expect(cpu.args).toEqual([
    '--model-id',
    'BAAI/bge-m3',
    '--hostname',
    '0.0.0.0',
    '--port',
    '80',
    '--revision',
    'main',
    '--dtype',
    'float32',
  ]);
});

test("custom: only the spec's image, port, command, args and env; its health path; no API key", () => {
  const spec = {
    model: { repository: 'Qwen/Qwen3-8B' },
    engine: {
      name: 'custom',
      image: 'example.com/server:1',
      port: 9000,
      command: ['serve'],
      args: ['--x'],
      env: { FOO: 'bar' },
    },
    resources: { gpuCount: 1 },
    healthCheck: { path: '/ready', startupTimeoutSeconds: 600, periodSeconds: 30 },
  };
  const ctx = context(spec, { apiKey: 'ignored', hfToken: 'hf' });
  expect(containerOf(renderResources(ctx))).toEqual({
    name: 'engine',
    image: 'example.com/server:1',
    imagePullPolicy: 'IfNotPresent',
    command: ['serve'],
    args: ['--x'],
    env: [
      ...HF_ENV,
      value('FOO', 'bar'),
      fromSecret('HF_TOKEN', 'HF_TOKEN'),
      fromSecret('HUGGING_FACE_HUB_TOKEN', 'HF_TOKEN'),
    ],
    ports: [{ name: 'http', containerPort: 9000, protocol: 'TCP' }],
    resources: {
      requests: { cpu: '2', memory: '8Gi', 'nvidia.com/gpu': 1 },
      limits: { memory: '8Gi', 'nvidia.com/gpu': 1 },
    },
    volumeMounts: MOUNTS,
    startupProbe: { ...http('/ready'), periodSeconds: 30, timeoutSeconds: 10, failureThreshold: 20 },
    readinessProbe: { ...http('/ready'), periodSeconds: 30, timeoutSeconds: 10, failureThreshold: 3 },
    livenessProbe: { ...http('/ready'), periodSeconds: 30, timeoutSeconds: 15, failureThreshold: 5 },
  });
  expect(endpoints(ctx).healthCheckUrl).toBe(`http://${BASE}.${NS}.svc.cluster.local/ready`);
  expect(
    (byKind(renderResources(ctx)).Deployment?.spec as { progressDeadlineSeconds: number }).progressDeadlineSeconds,
  ).toBe(1200);
});

test('an S3 model is synced by an aws-cli init container and loaded by path, without a revision; a pvc model is read from the existing claim, which is not created', () => {
  const s3 = renderResources(
    context({
      model: { source: 's3', repository: 's3://bucket/llama' },
      engine: { name: 'vllm' },
      resources: { gpuCount: 1, serviceAccountName: 'model-reader' },
    }),
  );
  const pod = podOf(s3);
  expect(pod.initContainers).toEqual([
    {
      name: 'download-model',
      image: 'amazon/aws-cli:latest',
      command: ['aws', 's3', 'sync', '--only-show-errors', 's3://bucket/llama', `/models/local/${BASE}`],
      volumeMounts: [{ name: 'models', mountPath: '/models' }],
    },
  ]);
  expect(pod.serviceAccountName).toBe('model-reader');
  expect(containerOf(s3).args).toEqual([
    '--model',
    `/models/local/${BASE}`,
    '--served-model-name',
    'test',
    '--host',
    '0.0.0.0',
    '--port',
    '8000',
  ]);

  const pvc = renderResources(
    context({
      model: { source: 'pvc', repository: 'models/qwen3', task: 'embedding' },
      engine: { name: 'tei' },
      storage: { existingClaim: 'weights' },
    }),
  );
  expect(pvc.map((r) => r.kind)).toEqual(['Deployment', 'Service']);
  expect((podOf(pvc).volumes as unknown[])[0]).toEqual({
    name: 'models',
    persistentVolumeClaim: { claimName: 'weights' },
  });
  expect(containerOf(pvc).args).toEqual([
    '--model-id',
    '/models/models/qwen3',
    '--hostname',
    '0.0.0.0',
    '--port',
    '80',
  ]);
});

test("the spec's tolerations, node labels and engine.env come first, as Smarter merges them; an engine.env variable overrides a default in its place", () => {
  const spec = {
    model: { repository: 'Qwen/Qwen3-8B' },
    engine: { name: 'vllm', env: { HF_HOME: '/cache', VLLM_LOGGING_LEVEL: 'DEBUG' } },
    resources: {
      gpuCount: 1,
      nodeSelector: { pool: 'gpu' },
      tolerations: [{ key: 'nvidia.com/gpu', operator: 'Equal', value: 'present', effect: 'NoSchedule' }],
    },
    storage: { accessMode: 'readwritemany' },
    scaling: { replicas: 2 },
  };
  const resources = renderResources(context(spec));
  const pod = podOf(resources);
  expect(pod.nodeSelector).toEqual({ pool: 'gpu', 'smarter.sh/compute': 'gpu_a10g_1x' });
  expect(pod.tolerations).toEqual([
    { key: 'nvidia.com/gpu', operator: 'Equal', value: 'present', effect: 'NoSchedule' },
  ]);
  expect(containerOf(resources).env).toEqual([
    value('HF_HOME', '/cache'),
    value('HF_HUB_CACHE', '/models/huggingface/hub'),
    value('VLLM_LOGGING_LEVEL', 'DEBUG'),
  ]);
  expect(byKind(resources).Deployment?.spec).toMatchObject({ replicas: 2, strategy: { type: 'RollingUpdate' } });
  // Neither a token nor a key: no Secret, and nothing refers to one.
  expect(resources.map((r) => r.kind)).not.toContain('Secret');
  expect(JSON.stringify(resources)).not.toContain('secretKeyRef');
});
