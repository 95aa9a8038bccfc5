/**
 * Every option of Celery 5.6's `celery worker` (celery/bin/worker.py, the daemon options of celery/bin/base.py)
 * and the global options of `celery` (celery/bin/celery.py), and what this worker does with each: read as a
 * setting (the flag of a declared setting, under Celery's spelling), or taken and named in one log line that
 * says why it has no meaning here. A deployment written for Celery's worker therefore starts unchanged:
 * no Celery option is refused.
 */

export type FlagUse =
  /** The flag of a declared setting: `long` is its name there (aliases are rewritten to it). */
  | { kind: 'setting'; long: string }
  /** Taken and ignored, with the reason logged once at start. */
  | { kind: 'ignored'; why: string }
  /** `-A/--app`: Celery's application module; the tasks here are this worker's own. */
  | { kind: 'app' };

export interface CeleryFlag {
  /** As Celery spells them: `-c`, `--concurrency`, aliases. */
  names: readonly string[];
  /** Takes a value (`--pool solo`, `--pool=solo`, `-Psolo`). */
  value: boolean;
  use: FlagUse;
}

const setting = (long: string): FlagUse => ({ kind: 'setting', long });
const ignored = (why: string): FlagUse => ({ kind: 'ignored', why });

/** `celery worker`'s options in Celery 5.6.3, in its order, then the daemon options. */
export const CELERY_WORKER_FLAGS: readonly CeleryFlag[] = [
  { names: ['-n', '--hostname'], value: true, use: setting('hostname') },
  {
    names: ['-D', '--detach'],
    value: false,
    use: ignored('a container runs its worker in the foreground; a detached worker would leave its init process'),
  },
  { names: ['-S', '--statedb'], value: true, use: setting('statedb') },
  { names: ['-l', '--loglevel'], value: true, use: setting('loglevel') },
  { names: ['-O', '--optimization'], value: true, use: setting('optimization') },
  { names: ['--prefetch-multiplier'], value: true, use: setting('prefetch-multiplier') },
  { names: ['--disable-prefetch'], value: false, use: setting('disable-prefetch') },
  { names: ['-c', '--concurrency'], value: true, use: setting('concurrency') },
  {
    names: ['-P', '--pool'],
    value: true,
    use: ignored(
      'one Node.js process runs the tasks in async slots (-c); there is no pool of processes or threads to choose',
    ),
  },
  { names: ['-E', '--task-events', '--events'], value: false, use: setting('task-events') },
  { names: ['--time-limit'], value: true, use: setting('time-limit') },
  { names: ['--soft-time-limit'], value: true, use: setting('soft-time-limit') },
  { names: ['--max-tasks-per-child'], value: true, use: setting('max-tasks-per-child') },
  { names: ['--max-memory-per-child'], value: true, use: setting('max-memory-per-child') },
  { names: ['--purge', '--discard'], value: false, use: setting('purge') },
  { names: ['-Q', '--queues'], value: true, use: setting('queues') },
  { names: ['-X', '--exclude-queues'], value: true, use: setting('exclude-queues') },
  {
    names: ['-I', '--include'],
    value: true,
    use: ignored('the tasks are compiled into this worker; there are no Python modules to import'),
  },
  { names: ['--without-gossip'], value: false, use: setting('without-gossip') },
  { names: ['--without-mingle'], value: false, use: setting('without-mingle') },
  { names: ['--without-heartbeat'], value: false, use: setting('without-heartbeat') },
  { names: ['--heartbeat-interval'], value: true, use: setting('heartbeat-interval') },
  { names: ['--autoscale'], value: true, use: setting('autoscale') },
  {
    names: ['-B', '--beat'],
    value: false,
    use: ignored(
      'Beat runs as its own process (`celery beat`, smarter-beat), one per deployment, never inside a worker',
    ),
  },
  {
    names: ['-s', '--schedule-filename', '--schedule'],
    value: true,
    use: ignored('the embedded Beat (-B) is not run here; smarter-beat takes --schedule'),
  },
  { names: ['--scheduler'], value: true, use: ignored('the embedded Beat (-B) is not run here') },
  { names: ['-f', '--logfile'], value: true, use: setting('logfile') },
  { names: ['--pidfile'], value: true, use: setting('pidfile') },
  {
    names: ['--uid'],
    value: true,
    use: ignored("the image sets the user (USER 1000, the pod's securityContext); a process cannot drop to another"),
  },
  {
    names: ['--gid'],
    value: true,
    use: ignored("the image sets the group (the pod's securityContext); a process cannot drop to another"),
  },
  { names: ['--umask'], value: true, use: setting('umask') },
  { names: ['--executable'], value: true, use: ignored('there is no Python interpreter to choose') },
];

/** `celery`'s global options (before the subcommand in Celery; taken anywhere here). */
export const CELERY_GLOBAL_FLAGS: readonly CeleryFlag[] = [
  { names: ['-A', '--app'], value: true, use: { kind: 'app' } },
  { names: ['-b', '--broker'], value: true, use: setting('broker') },
  { names: ['--result-backend'], value: true, use: setting('result-backend') },
  {
    names: ['--loader'],
    value: true,
    use: ignored('there is no Python loader; the settings are read from the environment'),
  },
  {
    names: ['--config'],
    value: true,
    use: ignored('there is no Python configuration module; the settings are read from the environment'),
  },
  { names: ['--workdir'], value: true, use: setting('workdir') },
  {
    names: ['-C', '--no-color'],
    value: false,
    use: ignored('log lines are JSON (or plain text on a terminal), never coloured'),
  },
  { names: ['-q', '--quiet'], value: false, use: ignored('there is no start-up banner to leave out') },
  { names: ['--skip-checks'], value: false, use: ignored('there are no Django checks to skip') },
];

export interface TranslatedArgs {
  /** The arguments with every alias rewritten to the setting's flag and every ignored option taken out. */
  args: string[];
  /** One line per ignored option, saying why. */
  ignored: string[];
  /** `-A`'s value, when given. */
  app: string | undefined;
  /** `-b`/`--broker` and `--workdir`, which are not worker settings here. */
  broker: string | undefined;
  workdir: string | undefined;
}

function lookup(flags: readonly CeleryFlag[], name: string): CeleryFlag | undefined {
  return flags.find((f) => f.names.includes(name));
}

/**
 * Rewrites a Celery command line into the settings' flags: `--events` → `--task-events`, `--discard` →
 * `--purge`, `-Psolo` taken out with a reason, `-A app` taken. Anything not Celery's is left for the settings
 * loader to accept or refuse. Arguments after `--` are left as they are.
 */
export function translateCeleryArgs(
  argv: readonly string[],
  flags: readonly CeleryFlag[] = [...CELERY_GLOBAL_FLAGS, ...CELERY_WORKER_FLAGS],
): TranslatedArgs {
  const out: TranslatedArgs = { args: [], ignored: [], app: undefined, broker: undefined, workdir: undefined };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--') {
      out.args.push(...argv.slice(i));
      break;
    }
    let name: string;
    let inline: string | undefined;
    const long = /^(--[^=]+)=(.*)$/s.exec(arg);
    if (long) {
      name = long[1] ?? arg;
      inline = long[2];
    } else if (/^-[A-Za-z]./.test(arg) && !arg.startsWith('--')) {
      // `-c5`, `-Psolo`: a short option with its value attached (for an option that takes one).
      const short = lookup(flags, arg.slice(0, 2));
      if (short?.value) {
        name = arg.slice(0, 2);
        inline = arg.slice(2);
      } else name = arg;
    } else name = arg;
    const flag = lookup(flags, name);
    if (!flag) {
      out.args.push(arg);
      continue;
    }
    let value: string | undefined;
    if (flag.value) {
      value = inline ?? argv[++i];
      if (value === undefined) {
        // Left for the settings loader, which names the missing value.
        out.args.push(arg);
        continue;
      }
    }
    const use = flag.use;
    if (use.kind === 'app') out.app = value;
    else if (use.kind === 'ignored') {
      out.ignored.push(`${flag.names.join('/')}${value === undefined ? '' : ` ${value}`} ignored: ${use.why}`);
    } else if (use.long === 'broker') out.broker = value;
    else if (use.long === 'workdir') out.workdir = value;
    else out.args.push(`--${use.long}`, ...(value === undefined ? [] : [value]));
  }
  return out;
}
