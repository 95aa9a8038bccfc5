/** The queue contract (ADR-030, rule 3): each of the three mistakes fails the check with a message naming entry, task and queue. */
import { checkSchedule } from '../../beat/check.js';
import { deploymentConsumers } from '../../beat/deployments.js';
import { type BeatEntry, smarterSchedule } from '../../tasks/beat-schedule.js';
import { every } from '../../lib/beat/schedules.js';
import { SMARTER_CATALOG } from '../../tasks/catalog.js';
import { smarterTasks } from '../../tasks/index.js';

const queues = {
  operationalQueue: 'default_celery_task_queue',
  infrastructureQueue: 'infrastructure_celery_task_queue',
};
const implemented = new Map(
  smarterTasks({ ...queues, maxRetries: 3, retryBackoff: true }).map((t) => [t.name, t.queue]),
);
const both = new Map([
  [
    'helm',
    new Map([
      [queues.operationalQueue, ['deployment worker']],
      [queues.infrastructureQueue, ['deployment worker-infrastructure']],
    ]),
  ],
]);
const check = (entries: BeatEntry[], consumers = both) =>
  checkSchedule({ entries, catalog: SMARTER_CATALOG, queues, implemented, consumers });

test("Smarter's real schedule holds the contract, and says which entries only Python workers serve yet", () => {
  const r = check(smarterSchedule(queues));
  expect(r.problems).toEqual([]);
  expect(r.ok).toBe(true);
  expect(r.lines.filter((l) => l.startsWith('ok '))).toHaveLength(11);
  expect(r.lines.join('\n')).toContain(
    '"refresh-llmhost-status": task smarter.apps.llmhost.tasks.refresh_llmhost_status, queue infrastructure_celery_task_queue; served by smarter-worker',
  );
  expect(r.lines.join('\n')).toContain(
    '"reconcile-vectorstores": task smarter.apps.vectorstore.tasks.reconcile_vectorstores, queue infrastructure_celery_task_queue; served by smarter-worker',
  );
});

test('an entry naming a task that does not exist fails, naming the entry, the task and the queue', () => {
  const r = check([
    {
      name: 'aggregate-chat',
      task: 'smarter.apps.prompt.tasks.aggregate_chat_history',
      schedule: every(3600),
      args: [],
      kwargs: {},
      options: { queue: queues.operationalQueue },
    },
  ]);
  expect(r.ok).toBe(false);
  expect(r.problems).toEqual([
    'entry "aggregate-chat": task smarter.apps.prompt.tasks.aggregate_chat_history, queue default_celery_task_queue: task smarter.apps.prompt.tasks.aggregate_chat_history is not registered by any worker (not a Smarter task)',
  ]);
});

test("an entry sending to a queue other than its task's fails", () => {
  const [entry] = smarterSchedule(queues).filter((e) => e.name === 'refresh-llmhost-status');
  const r = check([{ ...entry!, options: { queue: queues.operationalQueue } }]);
  expect(r.problems).toEqual([
    'entry "refresh-llmhost-status": task smarter.apps.llmhost.tasks.refresh_llmhost_status, queue default_celery_task_queue: task smarter.apps.llmhost.tasks.refresh_llmhost_status declares queue infrastructure_celery_task_queue, not default_celery_task_queue',
  ]);
});

test('an entry sending to a queue no deployment consumes fails (line A\'s "beat_tasks" mistake), as does an entry with no queue', () => {
  const schedule = smarterSchedule({ ...queues, operationalQueue: 'beat_tasks' }).filter(
    (e) => e.name === 'aggregate-charges',
  );
  const r = checkSchedule({
    entries: schedule,
    catalog: SMARTER_CATALOG,
    queues: { ...queues, operationalQueue: 'beat_tasks' },
    implemented: new Map(),
    consumers: both,
  });
  expect(r.problems).toEqual([
    'entry "aggregate-charges": task smarter.apps.account.tasks.aggregate_records, queue beat_tasks: no worker deployment in helm consumes queue beat_tasks (consumed there: default_celery_task_queue, infrastructure_celery_task_queue)',
  ]);
  const noQueue = check([{ ...schedule[0]!, options: {} }]);
  expect(noQueue.problems[0]).toMatch(/names no queue/);
});

test('the chart and compose.yaml of this repository consume both queues, so the real schedule passes against them', () => {
  const consumers = deploymentConsumers('.');
  expect([...consumers.keys()].sort()).toEqual(['compose.yaml', 'helm charts/smarter-worker']);
  for (const c of consumers.values()) {
    expect([...c.keys()].sort()).toEqual([queues.operationalQueue, queues.infrastructureQueue].sort());
  }
  expect(check(smarterSchedule(queues), consumers).ok).toBe(true);
});
