/**
 * Issue 17, item 9: the real programs answer `--help`/`-h` and `--version` with exit 0, as `celery worker
 * --help` does, even with a broken environment; an unknown flag still gets its clear error and exit 2.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';

const VERSION = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;

function run(main: string, args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', main, ...args], { env: { ...process.env, ...env }, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

describe.each([
  ['smarter-worker', 'tasks/main.ts', ['worker', 'settings', 'delayed'], ['--queues', 'SMARTER_WORKER_QUEUES', 'CELERY_BROKER_URL']],
  ['smarter-beat', 'beat/main.ts', ['run', 'check'], ['--schedule', 'CELERY_BROKER_URL']],
] as const)('%s', (program, main, commands, mentions) => {
  test.each([['--help'], ['-h']])('%s prints the usage with every subcommand and exits 0, even with a broken environment', async (flag) => {
    const r = await run(main, [flag], { CELERY_BROKER_URL: 'not a url' });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Usage: ${program}`);
    for (const c of commands) expect(r.stdout).toMatch(new RegExp(`\\n  ${c}\\b`));
    for (const m of mentions) expect(r.stdout).toContain(m);
  });

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
