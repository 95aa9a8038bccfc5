import { loadConfig } from '../../lib/config/settings.js';
import { compileWorkerConfig } from '../../lib/app/worker-config.js';
import { WORKER_SETTINGS } from '../../lib/app/worker-settings.js';

const values = (env: Record<string, string> = {}) => loadConfig(WORKER_SETTINGS, env, []).values;

test('the worker configuration is compiled once: seconds become ms, the default queue applies, the node name is expanded', () => {
  const c = compileWorkerConfig(
    values({ SMARTER_WORKER_SHUTDOWN_GRACE: '7', SMARTER_WORKER_ETA_HOLD_MAX: '30', CELERY_WORKER_HOSTNAME: 'w1@%h' }),
    {
      defaultQueue: 'default_celery_task_queue',
      host: 'box.example',
    },
  );
  expect(c.nodeName).toBe('w1@box.example');
  expect(c.worker.nodeName).toBe('w1@box.example');
  expect(c.broker.connectionName).toBe('w1@box.example');
  expect(c.worker.queues).toEqual(['default_celery_task_queue']);
  expect(c.worker.shutdownGraceMs).toBe(7000);
  expect(c.worker.delayedDelivery).toMatchObject({ holdMaxMs: 30_000 });
  expect(compileWorkerConfig(values({ SMARTER_WORKER_QUEUES: 'a,b' }), { defaultQueue: 'd' }).worker.queues).toEqual([
    'a',
    'b',
  ]);
});

test('the compiled configuration is frozen, all the way down', () => {
  const c = compileWorkerConfig(values(), { defaultQueue: 'q' });
  expect(Object.isFrozen(c)).toBe(true);
  expect(Object.isFrozen(c.worker)).toBe(true);
  expect(Object.isFrozen(c.worker.queues)).toBe(true);
  expect(Object.isFrozen(c.worker.defaults)).toBe(true);
  expect(() => (c.worker.queues as string[]).push('x')).toThrow(TypeError);
});
