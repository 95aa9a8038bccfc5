/**
 * A test that builds its own wiring says so in its name. What ships is `dist/tasks/main.js` and `dist/beat/main.js`
 * configured by the environment alone (spec/shipped runs exactly that); a test file that starts the worker or Beat
 * any other way, or runs tasks with adapters, dependencies, tasks or a broker of its own, must say `own wiring` in
 * every top-level describe or test title (the convention: titles start with `own wiring: `), so that no one reads it as a test of what ships.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/**
 * The support modules that build wiring of their own: workers assembled in-process (`createWorker` with test tasks
 * or injected deps), tsx mains that are not the shipped entry points, in-memory stand-ins of the broker and the
 * cloud ports, worlds that hand tasks their dependencies, test tasks, and runners that call a task without a worker.
 */
export const OWN_WIRING_MODULES = [
  'harness',
  'redis-harness',
  'smarter-harness',
  'worker-main',
  'fault-worker-main',
  'contain-worker-main',
  'worker-process',
  'spawn-worker',
  'beat-main',
  'beat-process',
  'redbeat-rolling',
  'memory-broker',
  'memory-worker',
  'fake-cloud',
  'cloud',
  'infra-world',
  'llmhost-world',
  'test-tasks',
  'fault-tasks',
  'contain-tasks',
  'stamp-task',
  'pushback',
  'task-context',
  'check-runner',
  'llmhost-task-runs',
  'llmclient-infra',
  'vectorstore-world',
] as const;

export const MARKER = 'own wiring';

/** The own-wiring modules a source names in an import or a string (a tsx main is spawned by its path). */
export function ownWiringUsed(source: string): string[] {
  const used = new Set<string>();
  for (const m of source.matchAll(/['"`][^'"`\n]*support\/([a-z0-9-]+)\.(?:ts|js)['"`]/g)) {
    const name = m[1] ?? '';
    if ((OWN_WIRING_MODULES as readonly string[]).includes(name)) used.add(name);
  }
  return [...used].sort();
}

/** The text a title starts with: a string, or a template literal's text before its first substitution. */
function titleText(node: ts.Expression | undefined): string | undefined {
  if (node === undefined) return undefined;
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isTemplateExpression(node)) return node.head.text;
  return undefined;
}

/** The name a call is made through: `describe`, `test.each`, `describe.each(table)` all give their root name. */
function rootName(callee: ts.Expression): string | undefined {
  if (ts.isIdentifier(callee)) return callee.text;
  if (ts.isPropertyAccessExpression(callee)) return rootName(callee.expression);
  if (ts.isCallExpression(callee)) return rootName(callee.expression);
  return undefined;
}

/**
 * The top-level suites and tests of a file (`describe`, `test`, `it`, their `.each`/`.skip`/..., and suite helpers
 * such as `describeBrokerConformance`), each with the title it gives, or '' when the title is not a literal.
 */
export function topLevelTitles(source: string, fileName = 'x.test.ts'): { call: string; title: string }[] {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const out: { call: string; title: string }[] = [];
  for (const statement of file.statements) {
    if (!ts.isExpressionStatement(statement) || !ts.isCallExpression(statement.expression)) continue;
    const call = statement.expression;
    const name = rootName(call.expression);
    if (name === undefined || !/^(describe|test|it)/.test(name)) continue;
    out.push({ call: name, title: titleText(call.arguments[0]) ?? '' });
  }
  return out;
}

/** Why a test file breaks the rule, or nothing when it keeps it. */
export function ownWiringProblems(source: string, fileName = 'x.test.ts'): string[] {
  const used = ownWiringUsed(source);
  if (used.length === 0) return [];
  const titles = topLevelTitles(source, fileName);
  if (titles.length === 0) return [`uses ${used.join(', ')} but has no top-level describe or test`];
  return titles
    .filter((t) => !t.title.includes(MARKER))
    .map((t) => `uses ${used.join(', ')}; its ${t.call} "${t.title}" does not say "${MARKER}"`);
}

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : testFiles(p);
    return e.name.endsWith('.test.ts') ? [p] : [];
  });
}

test('every test file that builds its own wiring says "own wiring" in each top-level title', () => {
  // This file names the modules in its own examples.
  const files = testFiles('spec').filter((f) => path.basename(f) !== 'test-names-say-own-wiring.test.ts');
  expect(files.length).toBeGreaterThan(100);
  const problems = files.flatMap((f) => ownWiringProblems(readFileSync(f, 'utf8'), f).map((p) => `${f}: ${p}`));
  expect(problems).toEqual([]);
});

test('the shipped suite builds no wiring of its own', () => {
  const shipped = testFiles('spec/shipped');
  expect(shipped.length).toBeGreaterThan(0);
  expect(shipped.filter((f) => ownWiringUsed(readFileSync(f, 'utf8')).length > 0)).toEqual([]);
});

test('the check finds a harness import, a spawned tsx main and an unmarked title, and accepts a marked one', () => {
  const harness = "import { startHarness } from '../support/harness.js';\n";
  expect(ownWiringProblems(`${harness}describe('the worker acks', () => {});\n`)).toHaveLength(1);
  expect(ownWiringProblems(`${harness}describe('own wiring: the worker acks', () => {});\n`)).toEqual([]);
  const spawned = "spawn(node, ['--import', 'tsx', 'spec/support/worker-main.ts']);\n";
  expect(ownWiringProblems(`${spawned}test('a', () => {});\ntest('own wiring: b', () => {});\n`)).toEqual([
    'uses worker-main; its test "a" does not say "own wiring"',
  ]);
  const each = "describe.each([['x', 1]])('own wiring: %s', () => {});\ntest.each([1])(`on ${'$'}{1}`, () => {});\n";
  expect(ownWiringProblems(`${harness}${each}`)).toEqual(['uses harness; its test "on " does not say "own wiring"']);
  expect(ownWiringProblems(`import { x } from '../support/shipped-world.js';\ntest('a', () => {});\n`)).toEqual([]);
  expect(ownWiringProblems(harness)).toEqual(['uses harness but has no top-level describe or test']);
});
