/**
 * docs/migrating.md: every command of its ```sh blocks runs (spec/support/doc-commands.ts) beside a Python
 * Celery worker of Smarter's app name (spec/interop/python/smarter/workers/celery.py): the workers and Beat
 * serve, every other command exits 0.
 */
import { readFileSync } from 'node:fs';
import { runPage, serves, shellCommands, substitutionsFor } from '../support/doc-commands.js';

const PAGE = 'docs/migrating.md';

test('every command of the migration guide runs: the workers, the Python worker and Beat serve, the others exit 0', async () => {
  const written = shellCommands(readFileSync(PAGE, 'utf8'));
  expect(written.length).toBeGreaterThanOrEqual(7);
  const s = await substitutionsFor(
    ['default_celery_task_queue', 'infrastructure_celery_task_queue', 'python_celery_task_queue'],
    [8080, 8081, 8082],
  );
  const env = {
    SMARTER_LLM_CLIENT_TASKS_CELERY_TASK_QUEUE: s.queues.default_celery_task_queue,
    SMARTER_INFRASTRUCTURE_TASKS_CELERY_TASK_QUEUE: s.queues.infrastructure_celery_task_queue,
  };
  // `smarter-beat check` compares the settings with the chart's and compose.yaml's queues: the page's defaults.
  const run = await runPage(PAGE, s, env, (c) => /smarter-beat check$/.test(c));
  const outcome = (r: { command: string; code: number | null; output: string }) => {
    if (r.code === null) return 'serving';
    // The page says so: a dead-letter queue exists from the first message kept in it.
    if (
      r.command.startsWith('smarter-worker dead-letter list ') &&
      r.code === 1 &&
      /dead_letter does not exist/.test(r.output)
    ) {
      return 'no dead letters yet';
    }
    return r.code === 0 ? 'exit 0' : `exit ${r.code}: ${r.output.slice(-1500)}`;
  };
  const expected = (c: string) =>
    serves(c) ? 'serving' : c.startsWith('smarter-worker dead-letter list ') ? 'no dead letters yet' : 'exit 0';
  expect(run.ran.map((r) => [r.command, outcome(r)])).toEqual(run.ran.map((r) => [r.command, expected(r.command)]));
  expect(run.ran).toHaveLength(written.length);
}, 400_000);
