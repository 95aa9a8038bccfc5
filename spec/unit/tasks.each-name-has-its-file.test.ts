/**
 * Every task the shipped worker registers (`smarterTasks`, as tasks/worker-main.ts builds it) lives at
 * `tasks/<app>/<name>.ts`: the app is the segment after `smarter.apps.`, the file its last segment in kebab case
 * (`smarter.apps.llmclient.tasks.deploy_default_api.continue_default_api_deployment` is
 * `tasks/llmclient/continue-default-api-deployment.ts`). The file declares that very name, so a task moved,
 * renamed or defined elsewhere fails here.
 */
import { existsSync, readFileSync } from 'node:fs';
import { smarterTasks } from '../../tasks/index.js';

const names = smarterTasks({
  operationalQueue: 'op',
  infrastructureQueue: 'infra',
  maxRetries: 3,
  retryBackoff: true,
}).map((t) => t.name);

/** Where a registered name's definition belongs, or why the name cannot say. */
function taskFileOf(name: string): string {
  const m = /^smarter\.apps\.([a-z0-9]+)\.tasks\.(?:[a-z0-9_]+\.)*([A-Za-z0-9_]+)$/.exec(name);
  if (!m) throw new Error(`${name} is not smarter.apps.<app>.tasks[.<module>].<name>`);
  return `tasks/${m[1]}/${m[2]!.toLowerCase().replaceAll('_', '-')}.ts`;
}

test('the rule reads the app and the last segment of each shape of name Smarter uses', () => {
  expect(taskFileOf('smarter.apps.account.tasks.create_charge')).toBe('tasks/account/create-charge.ts');
  expect(taskFileOf('smarter.apps.llmclient.tasks.destroy_domain_a_record.destroy_domain_A_record')).toBe(
    'tasks/llmclient/destroy-domain-a-record.ts',
  );
  expect(() => taskFileOf('celery.backend_cleanup')).toThrow(/not smarter\.apps/);
});

test('the worker registers the Smarter tasks, each name once', () => {
  expect(names.length).toBeGreaterThanOrEqual(39);
  expect(new Set(names).size).toBe(names.length);
});

test.each(names)('%s is defined in the file its name gives', (name) => {
  const file = taskFileOf(name);
  expect([file, existsSync(file)]).toEqual([file, true]);
  expect(readFileSync(file, 'utf8')).toContain(`'${name}'`);
});
