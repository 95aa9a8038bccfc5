/** The lint rule that keeps tasks/ in rooms: an app reaches another only through its index.ts, and the shared rooms import no app. */
import { Linter } from 'eslint';
import tseslint from 'typescript-eslint';
type Block = { files?: string[]; rules?: Linter.RulesRecord };
// The project's own ESLint configuration (plain JS, so imported by path).
const configPath = '../../eslint.config.js';
const config = ((await import(configPath)) as { default: Block[] }).default;

/** The messages of the rule's block for `files` on `code` in the file `at`. */
function problemsAt(files: string, at: string, code: string): string[] {
  const rules = config.find((b) => b.files?.includes(files))?.rules ?? {};
  const linter = new Linter({ configType: 'flat' });
  return linter
    .verify(code, [{ files: ['**/*.ts'], languageOptions: { parser: tseslint.parser }, rules }], at)
    .map((m) => m.message);
}

const problems = (room: string, code: string): string[] =>
  problemsAt(`tasks/${room}/**/*.ts`, `tasks/${room}/probe.ts`, code);

describe('the lint rule that keeps each app of tasks/ in its room', () => {
  test("flags an app importing another app's internals", () => {
    expect(problems('llmhost', "import { evaluateBudgets } from '../account/budgets.js';").join('\n')).toContain(
      'only through its index.ts',
    );
  });

  test("lets an app import another app's index, its own files and the shared rooms", () => {
    const code = [
      "import { evaluateBudgets } from '../account/index.js';",
      "import { findCompute } from './rows.js';",
      "import { str } from '../db/columns.js';",
      "import { CloudError } from '../cloud/errors.js';",
      "import { readSecret } from '../secret/rows.js';",
      "import { pk } from '../db/django.js';",
      "import type { TaskEnv } from '../env/task-env.js';",
    ].join('\n');
    expect(problems('llmhost', code)).toEqual([]);
  });

  test('flags a shared room importing any app, even its index', () => {
    expect(
      problems('cloud', "import type { InfrastructureLedger } from '../infrastructure/ledger.js';").join('\n'),
    ).toContain('imports none');
    expect(problems('db', "import { accountTasks } from '../account/index.js';").join('\n')).toContain('imports none');
  });

  test('still forbids waiting inside an app', () => {
    expect(problems('vectorstore', "import { setTimeout as sleep } from 'node:timers/promises';").join('\n')).toContain(
      'Never wait in a task',
    );
  });
});

describe('the lint rule that keeps tasks/ layered: assembly, apps, shared rooms, ground', () => {
  test('flags an app using an app it does not use, even through its index', () => {
    expect(problems('guardrail', "import { accountTasks } from '../account/index.js';").join('\n')).toContain(
      'only the apps it uses (none)',
    );
    expect(problems('account', "import { copyApiARecord } from '../llmclient/index.js';").join('\n')).toContain(
      'only the apps it uses',
    );
  });

  test('flags an app importing what assembles the worker', () => {
    expect(problems('prompt', "import { smarterTasks } from '../index.js';").join('\n')).toContain(
      'below what assembles the worker',
    );
    expect(problems('llmhost', "import { SETTINGS } from '../settings.js';").join('\n')).toContain(
      'below what assembles the worker',
    );
  });

  test('flags tasks/env importing an app, and a lower shared room importing a higher one', () => {
    expect(problems('env', "import { accountTasks } from '../account/index.js';").join('\n')).toContain('imports none');
    expect(problems('db', "import type { TaskEnv } from '../env/task-env.js';").join('\n')).toContain(
      'sits below tasks/env',
    );
    expect(problems('cloud', "import { pk } from '../db/django.js';").join('\n')).toContain('would run back up');
    expect(problems('secret', "import type { TaskEnv } from '../env/task-env.js';").join('\n')).toContain(
      'would run back up',
    );
  });

  test('lets tasks/env and tasks/secret import the rooms below them', () => {
    const env = [
      "import { CloudError } from '../cloud/errors.js';",
      "import type { Database } from '../db/database.js';",
      "import { both } from '../smarter-env.js';",
      "import { INFRASTRUCTURE_DEFAULTS } from './settings.js';",
    ].join('\n');
    expect(problems('env', env)).toEqual([]);
    expect(problems('secret', "import { NOW } from '../db/django.js';")).toEqual([]);
  });

  test('flags the ground of tasks/ importing any room of it', () => {
    expect(
      problemsAt('tasks/errors.ts', 'tasks/errors.ts', "import { pk } from './db/django.js';").join('\n'),
    ).toContain('ground of tasks/');
    expect(
      problemsAt('tasks/errors.ts', 'tasks/catalog.ts', "import { SETTINGS } from './settings.js';").join('\n'),
    ).toContain('ground of tasks/');
  });
});
