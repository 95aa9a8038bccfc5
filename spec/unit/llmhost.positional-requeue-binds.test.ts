/** The captured Celery 5.6 message of Smarter's positional re-queue binds to reconcile_llmhost_compute's parameters. */
import { decodeTaskMessage } from '../../lib/protocol/index.js';
import { bindArguments } from '../../lib/registry/args.js';
import { smarterTasks } from '../../tasks/index.js';
import { loadFixture, rawFromFixture } from '../support/fixtures.js';

const tasks = smarterTasks({
  operationalQueue: 'op',
  infrastructureQueue: 'infrastructure_celery_task_queue',
  maxRetries: 3,
  retryBackoff: true,
});
const task = (name: string) => {
  const t = tasks.find((x) => x.name === name);
  if (!t) throw new Error(`no ${name}`);
  return t;
};

test('apply_async((7, 2), countdown=30) from Celery 5.6 binds compute_id=7, attempt=2; (7,) binds attempt=1', () => {
  const msg = decodeTaskMessage(rawFromFixture(loadFixture('smarter-v1-reconcile-llmhost-compute-positional.json')), {
    accept: ['json'],
  });
  const reconcile = task(msg.task);
  expect(msg.task).toBe('smarter.apps.llmhost.tasks.reconcile_llmhost_compute');
  expect(bindArguments(reconcile, msg.args, msg.kwargs)).toEqual({ compute_id: 7, attempt: 2 });
  expect(bindArguments(reconcile, [7], {})).toEqual({ compute_id: 7, attempt: 1 });
  expect(reconcile.queue).toBe('infrastructure_celery_task_queue');
  expect(reconcile.retry).toBeUndefined();
});

test("the six tasks are registered under Smarter's names on the infrastructure queue, without autoretry, with Smarter's argument order", () => {
  const names = {
    'smarter.apps.llmhost.tasks.launch_llmhost': ['llmhost_id'],
    'smarter.apps.llmhost.tasks.destroy_llmhost': ['llmhost_id', 'purge'],
    'smarter.apps.llmhost.tasks.refresh_llmhost_status': ['llmhost_id'],
    'smarter.apps.llmhost.tasks.reconcile_llmhost_compute': ['compute_id', 'attempt'],
    'smarter.apps.llmhost.tasks.reconcile_llmhost_computes': [],
    'smarter.apps.infrastructure.tasks.sync_infrastructure_inventory': [],
  };
  for (const [name, argNames] of Object.entries(names)) {
    const t = task(name);
    expect([t.queue, t.retry, t.argNames]).toEqual(['infrastructure_celery_task_queue', undefined, argNames]);
  }
  expect(bindArguments(task('smarter.apps.llmhost.tasks.destroy_llmhost'), [3, true], {})).toEqual({
    llmhost_id: 3,
    purge: true,
  });
  expect(bindArguments(task('smarter.apps.llmhost.tasks.refresh_llmhost_status'), [], {})).toEqual({
    llmhost_id: null,
  });
});
