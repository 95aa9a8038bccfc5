import { Linter } from 'eslint';
import tseslint from 'typescript-eslint';
type Block = { files?: string[]; rules?: Linter.RulesRecord };
// The project's own ESLint configuration (plain JS, so imported by path).
const configPath = '../../eslint.config.js';
const config = ((await import(configPath)) as { default: Block[] }).default;
const taskRules = config.find((b) => b.files?.includes('tasks/**/*.ts'))?.rules ?? {};

function problems(code: string): string[] {
  const linter = new Linter({ configType: 'flat' });
  return linter
    .verify(
      code,
      [{ files: ['**/*.ts'], languageOptions: { parser: tseslint.parser }, rules: taskRules }],
      'tasks/account/probe.ts',
    )
    .map((m) => m.message);
}

describe('the lint rule that forbids sleeping in tasks/ (ADR-030)', () => {
  test.each([
    ['a setTimeout promise', 'await new Promise((r) => setTimeout(r, 1000));'],
    ['globalThis.setTimeout', 'globalThis.setTimeout(() => undefined, 1000);'],
    ['timers/promises', "import { setTimeout as sleep } from 'node:timers/promises'; await sleep(1000);"],
  ])('flags %s', (_name, code) => {
    expect(problems(code).join('\n')).toContain('Never wait in a task');
  });

  test('leaves a check-and-reschedule task alone', () => {
    expect(
      problems(
        'export async function run(ctx: { checkAgain(o: { after: number }): Promise<unknown> }) { return ctx.checkAgain({ after: 60 }); }',
      ),
    ).toEqual([]);
  });
});
