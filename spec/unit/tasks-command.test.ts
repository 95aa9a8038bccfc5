import { loadConfig } from '../../lib/config/settings.js';
import { SMARTER_CATALOG } from '../../tasks/catalog.js';
import { UsageError, takeCommandFlags } from '../../tasks/cli/options.js';
import { TASKS_FLAGS, contractTable, tasksTable } from '../../tasks/cli/tasks.js';
import { DEAD_LETTER_FLAGS } from '../../tasks/cli/dead-letter.js';
import { smarterTasks } from '../../tasks/index.js';
import { SETTINGS } from '../../tasks/settings.js';

const config = (env: Record<string, string> = {}) => loadConfig(SETTINGS, env).values;

test('smarter-worker tasks lists every registered task with its queue, retry policy, limits and whether it waits', () => {
  const out = tasksTable(config());
  for (const t of smarterTasks(config())) expect(out).toContain(t.name);
  expect(out).toContain('celery.accumulate');
  expect(out).toMatch(
    /^smarter\.apps\.account\.tasks\.create_charge +default_celery_task_queue +autoretry every error, max 3, backoff 1 s × 2\^n ≤ 600 s, jitter +soft none, hard 1800 s +no +yes$/m,
  );
  expect(out).toMatch(
    /^smarter\.apps\.guardrail\.tasks\.purge_guardrail_events +default_celery_task_queue +no autoretry .* +no +no$/m,
  );
});

test("--contract gives each of Smarter's 39 task names as implemented, forwarded (and where to) or rejected", () => {
  expect(SMARTER_CATALOG.size).toBe(39);
  const rejecting = contractTable(config());
  expect(rejecting).toContain('39 tasks: 39 implemented, 0 forwarded, 0 rejected');
  // A worker that did not implement launch_llmhost would forward it, to the queue the setting names.
  const some = new Set(
    smarterTasks(config())
      .map((t) => t.name)
      .filter((n) => !n.startsWith('smarter.apps.llmhost.tasks.launch_')),
  );
  const forwarding = contractTable(config({ SMARTER_WORKER_UNKNOWN_TASKS: 'forward:python_tasks' }), some);
  expect(forwarding).toContain('39 tasks: 38 implemented, 1 forwarded, 0 rejected');
  expect(forwarding).toMatch(
    /^smarter\.apps\.llmhost\.tasks\.launch_llmhost +infrastructure \(infrastructure_celery_task_queue\) +forwarded to python_tasks$/m,
  );
  expect(contractTable(config(), some)).toContain('39 tasks: 38 implemented, 0 forwarded, 1 rejected');
  expect(forwarding).toMatch(
    /^smarter\.apps\.account\.tasks\.create_charge +operational \(default_celery_task_queue\) +implemented$/m,
  );
});

test("a subcommand's own flags are taken out before the settings loader sees the rest", () => {
  expect(takeCommandFlags(['replay', 'q', '--task', 'a.b', '--limit=5', '-Q', 'x'], DEAD_LETTER_FLAGS)).toEqual({
    own: { task: 'a.b', limit: '5' },
    rest: ['replay', 'q', '-Q', 'x'],
  });
  expect(takeCommandFlags(['--contract'], TASKS_FLAGS)).toEqual({ own: { contract: true }, rest: [] });
  expect(() => takeCommandFlags(['replay', 'q', '--to'], DEAD_LETTER_FLAGS)).toThrow(UsageError);
});
