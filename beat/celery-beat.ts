/**
 * `celery beat` (bin/celery.ts): Celery's beat options read as smarter-beat's, then smarter-beat run in this
 * process as it runs on its own.
 */
import { type CeleryFlag, translateCeleryArgs } from '../lib/config/celery-flags.js';
import { createLogger } from '../lib/logger.js';

/** Celery 5.6's `celery beat` options (celery/bin/beat.py and the daemon options), as smarter-beat takes them. */
const CELERY_BEAT_FLAGS: readonly CeleryFlag[] = [
  { names: ['--detach'], value: false, use: { kind: 'ignored', why: 'a container runs Beat in the foreground' } },
  { names: ['-s', '--schedule'], value: true, use: { kind: 'setting', long: 'schedule' } },
  {
    names: ['-S', '--scheduler'],
    value: true,
    use: {
      kind: 'ignored',
      why: "smarter-beat's scheduler is a schedule file, or RedBeat's keys when SMARTER_BEAT_REDIS_URL is set",
    },
  },
  { names: ['--max-interval'], value: true, use: { kind: 'setting', long: 'max-interval' } },
  { names: ['-l', '--loglevel'], value: true, use: { kind: 'setting', long: 'loglevel' } },
  { names: ['-f', '--logfile'], value: true, use: { kind: 'ignored', why: 'Beat logs to stdout, for the container' } },
  {
    names: ['--pidfile'],
    value: true,
    use: { kind: 'ignored', why: 'Beat writes no pid file; one Beat runs per deployment' },
  },
  { names: ['--uid'], value: true, use: { kind: 'ignored', why: 'the image sets the user' } },
  { names: ['--gid'], value: true, use: { kind: 'ignored', why: 'the image sets the group' } },
  { names: ['--umask'], value: true, use: { kind: 'ignored', why: 'Beat writes only its schedule file' } },
  { names: ['--executable'], value: true, use: { kind: 'ignored', why: 'there is no Python interpreter to choose' } },
];

/** `celery beat`: smarter-beat with Celery's beat options, in this process. */
export async function celeryBeat(
  argv: readonly string[],
  app: string | undefined,
  ignoredGlobals: string[],
): Promise<number> {
  const t = translateCeleryArgs(argv, CELERY_BEAT_FLAGS);
  const args: string[] = [];
  for (let i = 0; i < t.args.length; i++) {
    const a = t.args[i] ?? '';
    // --max-interval is Beat's max loop interval, a setting read from the environment.
    if (a === '--max-interval') process.env.CELERY_BEAT_MAX_LOOP_INTERVAL = t.args[++i] ?? '';
    else args.push(a);
  }
  const logger = createLogger({ level: 'info' });
  for (const line of [...ignoredGlobals, ...t.ignored]) logger.warn(line);
  if (app !== undefined) {
    logger.info(`-A ${app}: the schedule is smarter-beat's own (Smarter's), not loaded from the Python app`);
  }
  // smarter-beat reads its arguments from the process's; it runs, and exits, as it does on its own.
  process.argv = [process.argv[0] ?? 'node', process.argv[1] ?? 'celery', ...args];
  await import('./main.js');
  return new Promise<number>(() => undefined);
}
