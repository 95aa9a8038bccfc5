#!/usr/bin/env node
/**
 * `celery`: Celery's command line over this worker, so that Smarter's commands and probes run unchanged in
 * this image: `celery -A <app> worker [flags]` runs smarter-worker, `celery -A <app> beat` smarter-beat,
 * `celery inspect|control|status|purge` speak to the workers as Python's CLI does. The process keeps its
 * command line (`node …/celery -A … worker …`), which `pgrep -f 'celery.*worker'` finds.
 */
import { CELERY_GLOBAL_FLAGS, translateCeleryArgs } from '../lib/config/celery-flags.js';
import { packageVersion } from '../lib/config/usage.js';
import { exitFatal, exitFlushed } from '../lib/logger.js';
import { CommandUsageError, UsageError, purgeCommand, remoteCommand } from '../tasks/celery/remote.js';

const SUBCOMMANDS = ['worker', 'beat', 'inspect', 'control', 'status', 'purge'];

const USAGE = `Usage: celery [OPTIONS] COMMAND [ARGS]...

Celery's command line over smarter-worker (Celery's wire protocol, in TypeScript).

Options:
  -A, --app TEXT         Accepted: the tasks are this worker's own.
  -b, --broker TEXT      The broker URL (CELERY_BROKER_URL).
  --result-backend TEXT  The result backend (CELERY_RESULT_BACKEND).
  --workdir PATH         Change to this directory first.
  -q, --quiet            Leave out the node count of inspect and status.
  --loader, --config, -C/--no-color, --skip-checks: accepted, with a line saying why they change nothing.
  --version              Show the version and exit.
  --help                 Show this message and exit.

Commands:
  worker   Start smarter-worker (every option of \`celery worker\`; see \`celery worker --help\`).
  beat     Start smarter-beat.
  inspect  Inspect the workers (any Celery worker, Python's or ours).
  control  Send a control command to the workers.
  status   Show the workers that are online.
  purge    Erase the messages of the task queues.
`;

async function main(argv: string[]): Promise<number> {
  // Celery's global options come before the subcommand.
  let i = 0;
  const globals: string[] = [];
  while (i < argv.length && !SUBCOMMANDS.includes(argv[i] ?? '')) {
    const arg = argv[i] ?? '';
    if (arg === '--help' || arg === '-h') {
      process.stdout.write(USAGE);
      return 0;
    }
    if (arg === '--version') {
      process.stdout.write(`5.6.3 (smarter-worker ${packageVersion()})\n`);
      return 0;
    }
    if (!arg.startsWith('-')) {
      process.stderr.write(
        `Usage: celery [OPTIONS] COMMAND [ARGS]...\nTry 'celery --help' for help.\n\nError: No such command '${arg}' here (this image's celery runs: ${SUBCOMMANDS.join(', ')}).\n`,
      );
      return 2;
    }
    const flag = CELERY_GLOBAL_FLAGS.find((f) => f.names.includes(arg.split('=')[0] ?? arg));
    globals.push(arg);
    if (flag?.value && !arg.includes('=')) globals.push(argv[++i] ?? '');
    i++;
  }
  const command = argv[i];
  const rest = argv.slice(i + 1);
  if (command === undefined) {
    process.stdout.write(USAGE);
    return 2;
  }
  if (command === 'worker') {
    const { main: workerMain } = await import('../tasks/worker-main.js');
    return workerMain(['worker', ...globals, ...rest]);
  }
  const g = translateCeleryArgs(globals, CELERY_GLOBAL_FLAGS);
  if (g.broker !== undefined) process.env.CELERY_BROKER_URL = g.broker;
  if (g.workdir !== undefined) process.chdir(g.workdir);
  const resultBackend = g.args.indexOf('--result-backend');
  if (resultBackend >= 0 && g.args[resultBackend + 1] !== undefined) {
    process.env.CELERY_RESULT_BACKEND = g.args[resultBackend + 1];
  }
  const quiet = globals.includes('-q') || globals.includes('--quiet');
  if (command === 'beat') {
    const { celeryBeat } = await import('../beat/celery-beat.js');
    return celeryBeat(rest, g.app, g.ignored);
  }
  try {
    if (command === 'purge') return await purgeCommand(rest);
    return await remoteCommand(command as 'inspect' | 'control' | 'status', rest, { quiet });
  } catch (err) {
    if (err instanceof UsageError || err instanceof CommandUsageError) {
      process.stderr.write(
        `Usage: celery ${command} [OPTIONS]\nTry 'celery ${command} --help' for help.\n\nError: ${err.message}\n`,
      );
      return 2;
    }
    throw err;
  }
}

main(process.argv.slice(2)).then(exitFlushed, (err: unknown) => exitFatal('celery', err));
