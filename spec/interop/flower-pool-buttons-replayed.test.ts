/**
 * Flower's pool buttons, replayed: Flower cannot be installed here (not on PyPI's mirror, not in Debian), so the
 * exact calls its HTTP API makes (flower/api/control.py: `pool_grow(n=n, reply=True, destination=[worker])`,
 * `pool_shrink`, `autoscale(min=, max=)`, `pool_restart`) are made with Debian's Python Celery against our running
 * worker, and each reply is judged as Flower judges it (`'ok' in response[0][worker]`), with the slot count Flower's
 * worker page reads from `stats` after each.
 */
import { AMQP_URL } from '../support/amqp.js';
import { withWorker } from '../support/harness.js';
import { pythonJson } from '../support/python-script.js';

type Step = { step: string; response: Array<Record<string, unknown>>; flower_ok: boolean; max_concurrency: number };

async function flower(node: string, ...steps: string[]): Promise<Step[]> {
  return (await pythonJson('spec/interop/python/flower_pool_calls.py', [AMQP_URL, node, ...steps])) as Step[];
}

describe('own wiring: Flower pool buttons replayed against a worker with fixed slots', () => {
  test('grow by 3, shrink by 2: Flower reads success and the slots move 4 → 7 → 5; autoscale and restart are refused as Celery refuses them', async () => {
    await withWorker({ env: { CELERY_WORKER_CONCURRENCY: '4' } }, async (h) => {
      const node = h.worker.nodeName;
      const steps = await flower(node, 'grow:3', 'shrink:2', 'autoscale:2:6', 'restart');
      expect(steps.map((s) => [s.step, s.flower_ok, s.max_concurrency])).toEqual([
        ['grow:3', true, 7],
        ['shrink:2', true, 5],
        ['autoscale:2:6', false, 5],
        ['restart', false, 5],
      ]);
      expect(steps[0]?.response).toEqual([{ [node]: { ok: 'pool will grow' } }]);
      expect(steps[1]?.response).toEqual([{ [node]: { ok: 'pool will shrink' } }]);
      expect(steps[2]?.response).toEqual([{ [node]: { error: "ValueError('Autoscale not enabled')" } }]);
      expect(steps[3]?.response).toEqual([{ [node]: { error: "ValueError('Pool restarts not enabled')" } }]);
      expect(h.worker.concurrency).toBe(5);
    });
  }, 150_000);
});

describe('own wiring: Flower pool buttons replayed against a worker with --autoscale', () => {
  test("autoscale min=3 max=8 succeeds as Flower reads it; grow and shrink answer Celery's autoscale refusal", async () => {
    await withWorker({ env: { SMARTER_WORKER_AUTOSCALE: '6,2' } }, async (h) => {
      const node = h.worker.nodeName;
      const steps = await flower(node, 'autoscale:3:8', 'grow:1', 'shrink:1');
      expect(steps[0]).toMatchObject({ flower_ok: true, response: [{ [node]: { ok: 'autoscale now max=8 min=3' } }] });
      expect(steps[0]?.max_concurrency).toBeGreaterThanOrEqual(3);
      expect(steps[1]?.response).toEqual([
        { [node]: { error: 'pool_grow is not supported with autoscale. Adjust autoscale range instead.' } },
      ]);
      expect(steps[2]?.flower_ok).toBe(false);
    });
  }, 150_000);
});
