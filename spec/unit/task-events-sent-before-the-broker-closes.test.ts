/**
 * Task events wait for the next turn of the event loop to leave in one `task.multi` message (lib/control/events.ts,
 * as Celery's worker buffers them). A task that ends during a warm shutdown must still have its events sent: the
 * worker sends what is buffered before it closes the broker, through every sink the events fan out to. On the
 * in-memory broker, with hooks, so that the events go through the fan-out.
 */
import { randomUUID } from 'node:crypto';
import * as z from 'zod';
import { WorkerHooks } from '../../lib/app/hooks.js';
import { encodeTaskMessage } from '../../lib/protocol/encode.js';
import { parseKombuJson } from '../../lib/protocol/json.js';
import { defineTask } from '../../lib/registry/define-task.js';
import { MemoryBroker, MemoryStore } from '../support/memory-broker.js';
import { memoryConfig, memoryWorker } from '../support/memory-worker.js';
import { waitFor } from '../support/wait.js';

const Q = 'events_at_close';

test('own wiring: the events of a task that ends during a warm shutdown are sent before the broker closes', async () => {
  const broker = new MemoryBroker(new MemoryStore());
  const order: string[] = [];
  const route = broker.route.bind(broker);
  broker.route = async (exchange, key, m) => {
    if (exchange === 'celeryev' && key === 'task.multi') {
      const types = (parseKombuJson(m.body.toString()) as Array<{ type: string }>).map((e) => e.type);
      order.push(...types);
    }
    return route(exchange, key, m);
  };
  const close = broker.close.bind(broker);
  broker.close = async () => {
    order.push('broker closed');
    return close();
  };
  let running = false;
  const tasks = [
    defineTask({
      name: 'events.slow',
      queue: Q,
      params: z.object({}),
      run: async () => {
        running = true;
        await new Promise((r) => setTimeout(r, 300));
        return 'done';
      },
    }),
  ];
  const config = memoryConfig(Q, {
    CELERY_WORKER_SEND_TASK_EVENTS: 'true',
    CELERY_WORKER_HOSTNAME: 'events@test',
    SMARTER_WORKER_SHUTDOWN_GRACE: '5',
  });
  const { app } = memoryWorker({ config, tasks, defaultQueue: Q, broker, hooks: new WorkerHooks() });
  await app.start();
  const id = randomUUID();
  await broker.send(Q, encodeTaskMessage({ id, task: 'events.slow', args: [], kwargs: {} }));
  await waitFor(() => running, 5000, 5);
  await app.shutdown();
  expect(order.filter((o) => o === 'task-succeeded' || o === 'broker closed')).toEqual([
    'task-succeeded',
    'broker closed',
  ]);
});
