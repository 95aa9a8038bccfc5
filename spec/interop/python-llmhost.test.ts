/**
 * Debian's Python Celery (protocol 1) sends `launch_llmhost.delay(id)` and, as Smarter does,
 * `reconcile_llmhost_compute.apply_async((compute_id,), countdown=…)` with positional args; our real worker
 * launches through moto EKS and the Kubernetes stand-in, and re-queues the reconcile through the broker as
 * `(compute_id, attempt + 1)` positionally (time scale 0.01: 30 s is 0.3 s) until the node joins.
 */
import type { TaskMessage } from '../../lib/protocol/types.js';
import { type TaskEvents, noEvents } from '../../lib/worker/events.js';
import { smarterTasks } from '../../tasks/index.js';
import { AMQP_URL, uniqueName } from '../support/amqp.js';
import { waitFor } from '../support/wait.js';
import { type Harness, startWorker } from '../support/harness.js';
import { CLUSTER, type LlmhostWorld, startLlmhostWorld } from '../support/llmhost-world.js';
import { alphaSettings } from '../support/alpha-settings.js';
import { pythonJson } from '../support/python-script.js';

const RECONCILE = 'smarter.apps.llmhost.tasks.reconcile_llmhost_compute';

let w: LlmhostWorld;
let infra: Harness;
const received: TaskMessage[] = [];

async function python(mode: string, params: Record<string, unknown>): Promise<{ id: string }> {
  const args = [AMQP_URL, infra.queue, mode, JSON.stringify(params)];
  return (await pythonJson('spec/interop/python/llmhost_client.py', args, { timeoutMs: 60_000 })) as { id: string };
}

beforeAll(async () => {
  const queue = uniqueName('infra');
  w = await startLlmhostWorld({ queue });
  const settings = {
    ...alphaSettings({ operationalQueue: uniqueName('op'), infrastructureQueue: queue }),
    checkTimeScale: 0.01,
    awsEksClusterName: CLUSTER,
    fernetEncryptionKey: w.fernetKey,
  };
  const events: TaskEvents = { ...noEvents, received: (m) => received.push(m) };
  infra = await startWorker({ queue, tasks: () => smarterTasks(settings), deps: w.deps, events });
}, 120_000);

afterAll(async () => {
  await infra?.stop();
  await w?.stop();
});

const reconciles = () => received.filter((m) => m.task === RECONCILE);

test('own wiring: Python launch_llmhost.delay(id) and reconcile_llmhost_compute.apply_async((compute_id,)): our worker re-queues (compute_id, attempt + 1) positionally until the node joins, then the compute is settled and the LLMHost active', async () => {
  const computeId = await w.newCompute({ name: 'gpu-l4-interop' });
  const id = await w.newLlmhost({
    name: 'interop',
    spec: {
      model: { repository: 'meta-llama/Llama-3.1-8B-Instruct' },
      engine: { name: 'vllm' },
      resources: { cpu: '4', memory: '16Gi', gpuCount: 1 },
      compute: 'gpu-l4-interop',
    },
  });
  await python('launch', { llmhost_id: id });
  await waitFor(async () => reconciles().some((m) => m.args[1] === 3), 30_000);
  const sent = await python('reconcile', { compute_id: computeId, countdown: 0 });
  await waitFor(async () => received.some((m) => m.id === sent.id), 30_000);
  const fromPython = received.find((m) => m.id === sent.id);
  expect(fromPython?.args).toEqual([computeId]);
  expect(fromPython?.kwargs).toEqual({});

  w.joinNode('gpu-l4-interop', `node-interop-${id}`);
  w.deploymentReady(`llmhost-${id}-interop`, 1);
  await waitFor(async () => {
    const [c] = await w.t.db.select('SELECT ready_nodes FROM llmhost_llmhostcompute WHERE id = ?', [computeId]);
    const [h] = await w.t.db.select('SELECT status FROM llmhost_llmhost WHERE id = ?', [id]);
    return Number(c?.ready_nodes) === 1 && h?.status === 'active';
  }, 30_000);
  // Settled: the chains stop re-queuing (each gets at most one more run after the node joined).
  const count = reconciles().length;
  await new Promise((r) => setTimeout(r, 2000));
  expect(reconciles().length - count).toBeLessThanOrEqual(2);
  const settledCount = reconciles().length;
  await new Promise((r) => setTimeout(r, 1500));
  expect(reconciles().length).toBe(settledCount);

  // Every re-queue our worker sent was positional, (compute_id, n), never keyword arguments.
  const requeued = reconciles().filter((m) => m.args.length === 2);
  expect(requeued.length).toBeGreaterThanOrEqual(2);
  expect(
    requeued.every(
      (m) => m.args[0] === computeId && typeof m.args[1] === 'number' && Object.keys(m.kwargs).length === 0,
    ),
  ).toBe(true);
}, 90_000);
