/**
 * A fatal exit leaves its reason in the (JSON) log, after every earlier line.
 * The real programs answer `--help`/`-h` and `--version` with exit 0, as `celery worker
 * --help` does, even with a broken environment; an unknown flag still gets its clear error and exit 2.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { AMQP_URL } from '../support/amqp.js';

const VERSION = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;

function run(
  main: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', main, ...args],
      { env: { ...process.env, ...env }, timeout: 60_000 },
      (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

describe.each([
  [
    'smarter-worker',
    'tasks/main.ts',
    ['worker', 'settings', 'delayed'],
    ['--queues', 'SMARTER_WORKER_QUEUES', 'CELERY_BROKER_URL'],
  ],
  ['smarter-beat', 'beat/main.ts', ['run', 'check'], ['--schedule', 'CELERY_BROKER_URL']],
] as const)('%s', (program, main, commands, mentions) => {
  test.each([['--help'], ['-h']])(
    '%s prints the usage with every subcommand and exits 0, even with a broken environment',
    async (flag) => {
      const r = await run(main, [flag], { CELERY_BROKER_URL: 'not a url' });
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(`Usage: ${program}`);
      for (const c of commands) expect(r.stdout).toMatch(new RegExp(`\\n  ${c}\\b`));
      for (const m of mentions) expect(r.stdout).toContain(m);
    },
  );

  test('--version prints the version and exits 0', async () => {
    expect(await run(main, ['--version'])).toMatchObject({ code: 0, stdout: `${program} ${VERSION}\n` });
  });

  test('an unknown flag still gets the clear error and exit 2', async () => {
    const r = await run(main, ['--bogus']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${program}: invalid configuration:`);
    expect(r.stderr).toContain("Unknown option '--bogus'");
  });
});

test('a fatal error at start is logged as the last JSON line, after the earlier lines, and exits 1', async () => {
  // A queue name RabbitMQ cannot take (over 255 bytes): the worker connects, starts, then cannot declare it.
  const queue = `probe_fatal_${'x'.repeat(300)}`;
  const r = await run('tasks/main.ts', ['-Q', queue, '-n', 'probe-fatal@%h'], {
    CELERY_BROKER_URL: AMQP_URL,
    LOG_LEVEL: 'info',
  });
  expect(r.code).toBe(1);
  const lines = r.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { level: string; message: string; fatal?: boolean });
  expect(lines[0]?.message).toBe('smarter-worker starting');
  expect(lines.some((l) => /worker probe-fatal@.* starting/.test(l.message))).toBe(true);
  expect(lines.at(-1)).toMatchObject({ level: 'error', fatal: true });
  expect(lines.at(-1)?.message).toMatch(/^smarter-worker stopped by a fatal error: .*up to 255 chars/);
  expect(r.stderr).toContain('smarter-worker: TypeError');
});
