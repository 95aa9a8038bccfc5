import { loadConfig } from '../../lib/config/settings.js';
import { WORKER_SETTINGS } from '../../lib/config/worker-settings.js';

test('SMARTER_WORKER_UNKNOWN_TASKS is reject by default, forward:<queue> names the queue, and anything else is refused', () => {
  expect(loadConfig(WORKER_SETTINGS, {}).values.unknownTasks).toEqual({ mode: 'reject' });
  expect(loadConfig(WORKER_SETTINGS, { SMARTER_WORKER_UNKNOWN_TASKS: 'forward:python_tasks' }).values.unknownTasks).toEqual({ mode: 'forward', queue: 'python_tasks' });
  expect(loadConfig(WORKER_SETTINGS, {}, ['--unknown-tasks', 'forward:q2']).values.unknownTasks).toEqual({ mode: 'forward', queue: 'q2' });
  expect(() => loadConfig(WORKER_SETTINGS, { SMARTER_WORKER_UNKNOWN_TASKS: 'forward:' })).toThrow(/SMARTER_WORKER_UNKNOWN_TASKS="forward:": expected reject or forward:<queue>/);
  expect(() => loadConfig(WORKER_SETTINGS, { SMARTER_WORKER_UNKNOWN_TASKS: 'drop' })).toThrow(/expected reject or forward:<queue>/);
});
