/**
 * The manual's generated tables (build/docs.ts, `npm run docs`) are what the code declares today: the settings
 * tables of docs/configuration.md and the task table of each app's page under docs/tasks/.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { docPages, generated, regenerate } from '../../build/docs.js';

test.each(docPages())('the generated tables of %s are current (else run `npm run docs`)', (page) => {
  const text = readFileSync(page, 'utf8');
  expect(regenerate(text)).toBe(text);
});

test("the configuration page holds the worker's and Beat's settings tables", () => {
  const page = readFileSync('docs/configuration.md', 'utf8');
  expect(page).toContain(generated('settings worker'));
  expect(page).toContain(generated('settings beat'));
});

test("every app of tasks/ that registers tasks has its page, and the page's table lists them", () => {
  const apps = readdirSync('tasks', { withFileTypes: true })
    .filter((e) => e.isDirectory() && readdirSync(`tasks/${e.name}`).includes('index.ts') && e.name !== 'cloud')
    .map((e) => e.name);
  expect(apps.length).toBeGreaterThanOrEqual(10);
  for (const app of apps) {
    expect([app, readFileSync(`docs/tasks/${app}.md`, 'utf8').includes(`<!-- generated: tasks ${app} -->`)]).toEqual([
      app,
      true,
    ]);
  }
});

test('a stale table is found', () => {
  const stale = '<!-- generated: settings beat -->\n| old |\n<!-- end generated -->';
  expect(regenerate(stale)).not.toBe(stale);
});
