/**
 * An LLMHost's container and Deployment, for the GPU servers vLLM, TGI and SGLang, compared with what Smarter's
 * renderer produces for the same spec: the expected objects are written by hand from
 * `smarter/smarter/apps/llmhost/services/renderer.py`, `services/engines.py` and `services/sources.py`; the specs
 * are Smarter's built-in LLMHosts (`smarter/smarter/apps/llmhost/data/llmhost/*.yaml`, in
 * `spec/fixtures/llmhost-builtins.ts`).
 */
import { pythonFloat } from '../../tasks/llmhost/engines.js';
import { endpoints, renderResources } from '../../tasks/llmhost/render.js';
import { LLAMA_3_1_8B_INSTRUCT, QWEN_SGLANG, QWEN_TGI } from '../fixtures/llmhost-builtins.js';
import {
  BASE,
  NS,
  context,
  byKind,
  containerOf,
  fromSecret,
  HF_ENV,
  MOUNTS,
  http,
  HF_TOKEN_ENV,
  gpuResources,
  LLAMA_8B_VLLM_ARGS,
} from '../support/llmhost-render.js';
import { probes, LABELS, servedArgs, modelIdArgs } from '../support/llmhost-render.js';

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
              args: LLAMA_8B_VLLM_ARGS,
              env: [...HF_ENV, ...HF_TOKEN_ENV, fromSecret('VLLM_API_KEY', 'API_KEY')],
              ports: [{ name: 'http', containerPort: 8000, protocol: 'TCP' }],
              resources: gpuResources('4', '24Gi', 1),
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
    ...servedArgs('--model', 'Qwen/Qwen3-8B', 'test', '8000', 'main'),
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
  ).toEqual(servedArgs('--model', 'Qwen/Qwen3-8B', 'test', '8000', 'abc123'));
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
      ...modelIdArgs('Qwen/Qwen2.5-1.5B-Instruct', '80', 'main'),
      '--max-total-tokens',
      '8192',
      '--max-input-tokens',
      '8191',
      '--max-concurrent-requests',
      '128',
    ],
    env: HF_ENV,
    ports: [{ name: 'http', containerPort: 80, protocol: 'TCP' }],
    resources: gpuResources('4', '8Gi', 1),
    volumeMounts: MOUNTS,
    ...probes(http('/health')),
  });
  const shard = containerOf(
    renderResources(
      context({ ...QWEN_TGI, engine: { name: 'tgi', tensorParallelSize: 1, dtype: 'float16', trustRemoteCode: true } }),
    ),
  );
  expect(shard.args).toEqual([
    ...modelIdArgs('Qwen/Qwen2.5-1.5B-Instruct', '80', 'main'),
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
      ...servedArgs('--model-path', 'Qwen/Qwen2.5-7B-Instruct', 'qwen2.5-7b-instruct', '30000', 'main'),
      '--context-length',
      '16384',
      '--mem-fraction-static',
      '0.85',
      '--api-key',
      '$(SMARTER_API_KEY)',
    ],
    env: [...HF_ENV, fromSecret('SMARTER_API_KEY', 'API_KEY')],
    ports: [{ name: 'http', containerPort: 30000, protocol: 'TCP' }],
    resources: gpuResources('4', '23Gi', 1),
    volumeMounts: MOUNTS,
    ...probes(http('/health')),
  });
});
