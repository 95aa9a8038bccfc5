/**
 * An LLMHost's container and Deployment, for llama.cpp, Ollama, TEI and a custom image, compared with what Smarter's
 * renderer produces for the same spec: the expected objects are written by hand from
 * `smarter/smarter/apps/llmhost/services/renderer.py`, `services/engines.py` and `services/sources.py`; the specs
 * are Smarter's built-in LLMHosts (`smarter/smarter/apps/llmhost/data/llmhost/*.yaml`, in
 * `spec/fixtures/llmhost-builtins.ts`).
 */
import { endpoints, renderResources } from '../../tasks/llmhost/render.js';
import { BGE_M3_TEI, GGUF_URL, LLAMA_CPP_CPU, LLAMA_CPP_URL, OLLAMA_CPU } from '../fixtures/llmhost-builtins.js';
import {
  BASE,
  NS,
  context,
  byKind,
  podOf,
  containerOf,
  value,
  fromSecret,
  HF_ENV,
  HF_TOKEN_ENV,
  gpuResources,
} from '../support/llmhost-render.js';
import { MOUNTS, http, probes, modelIdArgs, llamaServerArgs } from '../support/llmhost-render.js';

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
      ...llamaServerArgs('llama-3.2-3b-instruct'),
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
  expect(containerOf(resources).args).toEqual(['--model', path, ...llamaServerArgs('llama-3.2-1b-instruct')]);
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
    args: [...modelIdArgs('BAAI/bge-m3', '80', 'main'), '--max-concurrent-requests', '512'],
    env: [...HF_ENV, fromSecret('API_KEY', 'API_KEY')],
    ports: [{ name: 'http', containerPort: 80, protocol: 'TCP' }],
    resources: gpuResources('4', '8Gi', 1),
    volumeMounts: MOUNTS,
    ...probes(http('/health')),
  });
  const cpu = containerOf(
    renderResources(context({ ...BGE_M3_TEI, engine: { name: 'tei', dtype: 'float32' }, resources: {} })),
  );
  expect(cpu.image).toBe('ghcr.io/huggingface/text-embeddings-inference:cpu-latest');
  expect(cpu.args).toEqual([...modelIdArgs('BAAI/bge-m3', '80', 'main'), '--dtype', 'float32']);
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
    env: [...HF_ENV, value('FOO', 'bar'), ...HF_TOKEN_ENV],
    ports: [{ name: 'http', containerPort: 9000, protocol: 'TCP' }],
    resources: gpuResources('2', '8Gi', 1),
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
