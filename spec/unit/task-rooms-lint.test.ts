/** The lint rule that keeps tasks/ in rooms: an app reaches another only through its index.ts, and the shared rooms import no app. */
import { Linter } from 'eslint';
import tseslint from 'typescript-eslint';
type Block = { files?: string[]; rules?: Linter.RulesRecord };
// The project's own ESLint configuration (plain JS, so imported by path).
const configPath = '../../eslint.config.js';
const config = ((await import(configPath)) as { default: Block[] }).default;

function problems(room: string, code: string): string[] {
  const rules = config.find((b) => b.files?.includes(`tasks/${room}/**/*.ts`))?.rules ?? {};
  const linter = new Linter({ configType: 'flat' });
  return linter
    .verify(
      code,
      [{ files: ['**/*.ts'], languageOptions: { parser: tseslint.parser }, rules }],
      `tasks/${room}/probe.ts`,
    )
    .map((m) => m.message);
}

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
      "import { CloudError } from '../cloud/ports.js';",
      "import { readSecret } from '../secret/rows.js';",
      "import { pk } from '../deps.js';",
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
