import { loadConfig } from '../../lib/config/settings.js';
import { WORKER_SETTINGS } from '../../lib/app/worker-settings.js';
import type { Broker, Delivery } from '../../lib/broker/broker.js';
import { FORWARD_NAMES_MAX, Forwarder } from '../../lib/worker/intake/forward.js';
import { recordingLogger } from '../support/logs.js';

test('SMARTER_WORKER_UNKNOWN_TASKS is reject by default, forward:<queue> names the queue, and anything else is refused', () => {
  expect(loadConfig(WORKER_SETTINGS, {}).values.unknownTasks).toEqual({ mode: 'reject' });
  expect(
    loadConfig(WORKER_SETTINGS, { SMARTER_WORKER_UNKNOWN_TASKS: 'forward:python_tasks' }).values.unknownTasks,
  ).toEqual({ mode: 'forward', queue: 'python_tasks' });
  expect(loadConfig(WORKER_SETTINGS, {}, ['--unknown-tasks', 'forward:q2']).values.unknownTasks).toEqual({
    mode: 'forward',
    queue: 'q2',
  });
  expect(() => loadConfig(WORKER_SETTINGS, { SMARTER_WORKER_UNKNOWN_TASKS: 'forward:' })).toThrow(
    /SMARTER_WORKER_UNKNOWN_TASKS="forward:": expected reject or forward:<queue>/,
  );
  expect(() => loadConfig(WORKER_SETTINGS, { SMARTER_WORKER_UNKNOWN_TASKS: 'drop' })).toThrow(
    /expected reject or forward:<queue>/,
  );
});

test('forwarding remembers at most 1,000 task names (each logged once); past them, invented names share one counter', async () => {
  const sent: string[] = [];
  const broker = {
    declareQueue: () => Promise.resolve(),
    send: (q: string) => Promise.resolve(void sent.push(q)),
  } as unknown as Broker;
  const logger = recordingLogger();
  const f = new Forwarder(broker, 'python_tasks', 'us@host', logger);
  const delivery = (task: string) =>
    ({ queue: 'default', raw: { body: Buffer.from('[]'), properties: { headers: { task } } } }) as unknown as Delivery;
  for (let i = 0; i < FORWARD_NAMES_MAX + 500; i++) {
    expect(await f.forward(delivery(`made.up.${i}`), `made.up.${i}`)).toEqual({ kind: 'forwarded' });
  }
  expect(sent).toHaveLength(FORWARD_NAMES_MAX + 500);
  expect(f.counts.size).toBe(FORWARD_NAMES_MAX + 1);
  expect(f.counts.get('(other task names)\0python_tasks')).toBe(500);
  expect(logger.lines.filter((l) => l.message.startsWith('forwarding task'))).toHaveLength(FORWARD_NAMES_MAX);
});
