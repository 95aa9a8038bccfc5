/** How the docs' command tests (spec/support/doc-commands.ts) read a page: which lines are commands, which serve. */
import { serves, shellCommands } from '../support/doc-commands.js';

test('the commands of a page are the lines of its sh (or bash) blocks, continuations joined, comments and other blocks left out', () => {
  const page = [
    'text `not a command`',
    '```sh',
    "CELERY_BROKER_URL='amqp://a' \\",
    'smarter-worker -Q q   # the worker',
    '# a comment line',
    '',
    'smarter-beat check',
    '```',
    '```bash',
    'smarter-worker delayed',
    '```',
    '```text',
    'output, not a command',
    '```',
    '```python',
    'print(1)',
    '```',
  ].join('\n');
  expect(shellCommands(page)).toEqual([
    "CELERY_BROKER_URL='amqp://a'  smarter-worker -Q q",
    'smarter-beat check',
    'smarter-worker delayed',
  ]);
});

test('a worker, Beat or a Python worker serves; a subcommand, curl or celery inspect answers and exits', () => {
  for (const c of [
    'smarter-worker -Q q -c 64',
    'smarter-beat --http-port 8082',
    'node dist/tasks/main.js -Q q',
    'node dist/beat/main.js',
    'celery -A smarter.workers.celery.app worker -Q q',
    'SMARTER_WORKER_UNKNOWN_TASKS=forward:p smarter-worker -Q q',
  ]) {
    expect([c, serves(c)]).toEqual([c, true]);
  }
  for (const c of [
    'smarter-worker tasks --contract',
    'smarter-beat check',
    'node dist/tasks/main.js tasks --contract',
    'curl -sf http://localhost:8080/readyz',
    'celery -b amqp://x inspect ping -d w@h',
    'smarter-worker dead-letter list q',
  ]) {
    expect([c, serves(c)]).toEqual([c, false]);
  }
});
