/**
 * docs/getting-started.md: every command of its ```sh blocks runs (spec/support/doc-commands.ts), the processes
 * serve, the one-shot commands exit 0, and they print what the page says they end with.
 */
import { readFileSync } from 'node:fs';
import { runPage, shellCommands, substitutionsFor } from '../support/doc-commands.js';

const PAGE = 'docs/getting-started.md';

test('the page shows commands to run (so that the test below runs something)', () => {
  expect(shellCommands(readFileSync(PAGE, 'utf8')).length).toBeGreaterThanOrEqual(5);
});

test("every command of getting started runs: three processes serve, the checks exit 0 and print the page's last lines", async () => {
  const s = await substitutionsFor(
    ['default_celery_task_queue', 'infrastructure_celery_task_queue'],
    [8080, 8081, 8082],
  );
  const env = {
    SMARTER_LLM_CLIENT_TASKS_CELERY_TASK_QUEUE: s.queues.default_celery_task_queue,
    SMARTER_INFRASTRUCTURE_TASKS_CELERY_TASK_QUEUE: s.queues.infrastructure_celery_task_queue,
  };
  // `check` compares the settings with the chart's and compose.yaml's queues: it runs with the page's defaults.
  const run = await runPage(PAGE, s, env, (c) => / check$/.test(c));
  expect(
    run.ran.map((r) => [
      r.command,
      r.code === null ? 'serving' : r.code,
      r.code === null || r.code === 0 ? '' : r.output.slice(-1500),
    ]),
  ).toEqual(run.ran.map((r) => [r.command, r.code === null ? 'serving' : 0, '']));
  expect(run.ran).toHaveLength(shellCommands(readFileSync(PAGE, 'utf8')).length);
  const page = readFileSync(PAGE, 'utf8');
  const endings = [...page.matchAll(/it ends with\n\n```text\n([\s\S]*?)\n```/g)].map((m) => m[1] ?? '');
  expect(endings).toHaveLength(2);
  const outputs = run.ran.map((r) => r.output.trimEnd());
  for (const ending of endings) expect(outputs.some((o) => o.endsWith(ending))).toBe(true);
}, 400_000);
