/**
 * The manual's generated tables: the settings tables of docs/configuration.md and the task table of each
 * docs/tasks/<app>.md, built from the settings' declarations and from the registry, so that they say what the
 * code reads and registers. Each sits between `<!-- generated: <block> -->` and `<!-- end generated -->`.
 *
 *   npm run docs            rewrite every generated block of docs/ in place
 *
 * spec/unit/docs-tables.test.ts fails while a block is not what this file generates.
 */
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig, settingsTable } from '../lib/config/settings.js';
import { ANY_QUEUE } from '../lib/registry/define-task.js';
import { BEAT_SETTINGS } from '../beat/settings.js';
import { describeRetry } from '../tasks/cli/tasks.js';
import { smarterTasks } from '../tasks/index.js';
import { SETTINGS } from '../tasks/settings.js';
import { celerySettingsTable, envNames } from '../lib/config/celery-settings.js';

export const DOCS = 'docs';
const BLOCK = /<!-- generated: ([^>]+?) -->\n[\s\S]*?<!-- end generated -->/g;

/** `smarter.apps.<app>.tasks[.<module>].<name>` → its app and its file, `tasks/<app>/<name-in-kebab>.ts`. */
export function taskFile(name: string): { app: string; file: string } | undefined {
  const m = /^smarter\.apps\.([a-z_]+)\.tasks\.(?:[a-z_]+\.)?([A-Za-z_]+)$/.exec(name);
  if (!m?.[1] || !m[2]) return undefined;
  return { app: m[1], file: `tasks/${m[1]}/${m[2].toLowerCase().replace(/_/g, '-')}.ts` };
}

/** The task table of one of Smarter's apps, from the registry as the default settings build it. */
export function appTaskTable(app: string): string {
  const config = loadConfig(SETTINGS, {}).values;
  const rows = smarterTasks(config)
    .filter((t) => taskFile(t.name)?.app === app)
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((t) => {
      const file = taskFile(t.name)?.file ?? '';
      const queue =
        t.queue === ANY_QUEUE
          ? '(any)'
          : t.queue === config.operationalQueue
            ? 'operational'
            : t.queue === config.infrastructureQueue
              ? 'infrastructure'
              : t.queue;
      const waits = t.checks ? `checks again, up to ${t.checks.maxAttempts} checks` : 'no';
      return `| \`${t.name}\` | [${file.slice(`tasks/${app}/`.length)}](../../${file}) | ${queue} | ${describeRetry(t.retry)} | ${waits} | ${t.deadLetterOnExhaustion ? 'yes' : 'no'} |`;
    });
  if (rows.length === 0) throw new Error(`no registered task belongs to app ${app}`);
  return [
    '| task | file (`tasks/' + app + '/`) | queue | retry | waits | dead-letter on failure |',
    '|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

/** The content of a generated block, by its name: `settings worker`, `settings beat`, `tasks <app>`. */
export function generated(block: string): string {
  if (block === 'settings worker') return settingsTable(SETTINGS);
  if (block === 'settings beat') return settingsTable(BEAT_SETTINGS);
  if (block === 'settings celery') return celerySettingsTable(envNames(SETTINGS));
  const app = /^tasks ([a-z_]+)$/.exec(block)?.[1];
  if (app) return appTaskTable(app);
  throw new Error(`unknown generated block "${block}"`);
}

/** A page with every generated block rewritten. */
export function regenerate(markdown: string): string {
  return markdown.replace(
    BLOCK,
    (_all, block: string) => `<!-- generated: ${block} -->\n${generated(block)}\n<!-- end generated -->`,
  );
}

/** Every markdown file under docs/. */
export function docPages(root = DOCS): string[] {
  if (!existsSync(root)) return [];
  return readdirSync(root, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? docPages(path.join(root, e.name)) : e.name.endsWith('.md') ? [path.join(root, e.name)] : [],
  );
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  for (const page of docPages()) {
    const text = readFileSync(page, 'utf8');
    const next = regenerate(text);
    if (next !== text) {
      writeFileSync(page, next);
      console.log(`regenerated ${page}`);
    }
  }
}
