/**
 * An LLMHost's container and Deployment, for a model from S3 or a claim and for the spec's own tolerations, node
 * labels and env, compared with what Smarter's renderer produces for the same spec: the expected objects are written
 * by hand from `smarter/smarter/apps/llmhost/services/renderer.py`, `services/engines.py` and `services/sources.py`;
 * the specs are Smarter's built-in LLMHosts (`smarter/smarter/apps/llmhost/data/llmhost/*.yaml`, in
 * `spec/fixtures/llmhost-builtins.ts`).
 */
import { renderResources } from '../../tasks/llmhost/render.js';
import { BASE, context, byKind, podOf, containerOf, value, servedArgs } from '../support/llmhost-render.js';
import { modelIdArgs } from '../support/llmhost-render.js';

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
  expect(containerOf(s3).args).toEqual(servedArgs('--model', `/models/local/${BASE}`, 'test', '8000'));

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
  expect(containerOf(pvc).args).toEqual(modelIdArgs('/models/models/qwen3', '80'));
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
