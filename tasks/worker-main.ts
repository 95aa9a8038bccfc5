/**
 * `smarter-worker` (and `celery worker`): every flag of Celery's `celery worker` and Smarter's environment.
 * Exit codes: 0 after a warm shutdown, 1 after a cold one, 2 for bad configuration, 75 when the worker asks to
 * be replaced (recycling; a supervising parent starts a fresh one).
 */
import { createWorker } from '../lib/app/app.js';
import { type ValuesOf, describeConfig, loadCommandLine, settingsTable } from '../lib/config/settings.js';
import { celeryConf } from '../lib/config/celery-conf.js';
import { type Subcommand, answerInfoFlags } from '../lib/config/usage.js';
import { type Logger, createLogger } from '../lib/logger.js';
import { type RedisTransport, createBroker, redisOptionsOf } from '../lib/broker/create-broker.js';
import type { TlsSettings } from '../lib/config/tls.js';
import { formatDuration, nextDueWithinSeconds } from '../lib/broker/delayed.js';
import { installSignalHandlers } from '../lib/app/signals.js';
import { boundHeapGrowth } from '../lib/app/heap-growth.js';
import { startTracing, stopTracing } from '../lib/tracing/tracing.js';
import { runDelayedAction } from './cli/delayed.js';
import { isCommand } from './cli/names.js';
import { openCloud } from './cloud/index.js';
import { withLedger } from './cloud/recording-kubernetes.js';
import { InfrastructureLedger } from './infrastructure/ledger.js';
import { openSmarterDatabase } from './db/database.js';
import { smarterTaskStubs } from './stubs.js';
import { SMARTER_CATALOG } from './catalog.js';
import { SETTINGS } from './settings.js';
import { translateCeleryArgs } from '../lib/config/celery-flags.js';
import { celeryEnvReport, celeryEnvWarnings, celerySettingsTable, envNames } from '../lib/config/celery-settings.js';
import { RECYCLE_EXIT_CODE } from '../lib/control/recycle.js';
import { SUPERVISED_CHILD_ENV, claimPidfile, supervise } from '../lib/app/supervisor.js';

/** The subcommands, for `--help`; the first is what runs without one. */
const COMMANDS: Subcommand[] = [
  { name: 'worker', summary: 'Consume the queues and run the tasks (the default).' },
  { name: 'settings', summary: 'Print the configuration table (docs/configuration.md) and exit.' },
  {
    name: 'delayed',
    summary:
      'List what waits in the delay topology; `delayed purge [--queue Q]` removes it, `delayed release [--queue Q]` moves it back into its queue now, unchanged (rollback to Python workers).',
  },
  { name: 'tasks', summary: "List the registered tasks; --contract: each of Smarter's 39 names and who serves it." },
  {
    name: 'doctor',
    summary:
      'Check the broker, queues, delay topology, dead letters, result backend, database and cloud credentials; one line per problem; exit 1 on a failure.',
  },
  {
    name: 'contract',
    summary:
      "--smarter <checkout> [--json]: compare a Smarter checkout's tasks, Beat schedule and settings with this worker's; one line per difference; exit 1 when there is one.",
  },
  {
    name: 'dead-letter',
    summary:
      'list <queue> | replay <queue> [--task N] [--reason T] [--limit N] [--to Q]: read or replay a dead-letter queue.',
  },
];

/**
 * Runs `smarter-worker` with these arguments. `program` names it in messages; `celery worker` passes its
 * own name and the `-A`/`-b` it took before the subcommand.
 */
export async function main(
  argv: string[],
  o: { program?: string; app?: string; broker?: string } = {},
): Promise<number> {
  if (isCommand(argv[0])) return (await import('./cli/commands.js')).runCommand(argv);
  const celery = translateCeleryArgs(argv[0] === 'worker' ? argv.slice(1) : argv);
  const app = celery.app ?? o.app;
  const brokerFlag = celery.broker ?? o.broker;
  if (brokerFlag !== undefined) process.env.CELERY_BROKER_URL = brokerFlag;
  // The global process: importing node:process builds its ESM facade, which reads every property at start, stdin
  // too (opening a stream on it).
  if (celery.workdir !== undefined) process.chdir(celery.workdir);
  const given = celery.args;
  // `delayed purge|release --queue Q`: --queue is the subcommand's own flag, not a setting.
  const { rest: args, queue: delayedQueue } =
    given[0] === 'delayed' ? takeQueueFlag(given) : { rest: given, queue: undefined };
  const info = answerInfoFlags(args, {
    program: 'smarter-worker',
    summary: "Smarter's Celery worker (Celery's wire protocol, in TypeScript).",
    settings: SETTINGS,
    commands: COMMANDS,
  });
  if (info !== null) return info;
  const loaded = loadCommandLine('smarter-worker', SETTINGS, process.env, args);
  if (!loaded) return 2;
  const { values: config, positionals } = loaded;
  if (positionals[0] === 'settings') {
    process.stdout.write(`${settingsTable(SETTINGS)}\n\n${celerySettingsTable(envNames(SETTINGS))}\n`);
    return 0;
  }
  if (positionals.length > 0 && positionals[0] !== 'delayed') {
    process.stderr.write(`smarter-worker: unknown command ${JSON.stringify(positionals[0])}\n`);
    return 2;
  }
  // `delayed` prints data on stdout: its logs (the broker connecting) go to stderr.
  const logger = createLogger({
    level: config.logLevel,
    ...(positionals[0] === 'delayed' ? { stream: 'stderr' as const } : {}),
  });
  if (positionals[0] === 'delayed') {
    const action = positionals[1];
    if (action === undefined) {
      return printDelayed(config.brokerUrl, logger, redisOptionsOf(config.brokerTransportOptions), config.brokerUseSsl);
    }
    if (action !== 'purge' && action !== 'release') {
      process.stderr.write(`smarter-worker: delayed takes purge or release, not ${JSON.stringify(action)}\n`);
      return 2;
    }
    return actOnDelayed(
      action,
      delayedQueue,
      config.brokerUrl,
      logger,
      redisOptionsOf(config.brokerTransportOptions),
      config.brokerUseSsl,
    );
  }
  const child = process.env[SUPERVISED_CHILD_ENV] === '1';
  if (config.umask !== null) process.umask(config.umask);
  const recycles =
    config.maxTasksPerChild !== null ||
    config.maxMemoryPerChild !== null ||
    config.maxAbandonedRuns !== null ||
    config.poolRestarts;
  if (!child) {
    for (const line of celery.ignored) logger.warn(line);
    if (app !== undefined) {
      logger.info(
        `-A ${app}: the tasks are this worker's own (${SMARTER_CATALOG.size} of Smarter's, compiled in; \`smarter-worker tasks\` lists them), not loaded from the Python app`,
      );
    }
    for (const w of celeryEnvWarnings(celeryEnvReport(process.env, envNames(SETTINGS)))) {
      logger.warn(w);
    }
    if (config.optimization === 'fair') logger.info('-O fair: slots are always given work only when free, as fair is');
    if (config.withoutGossip) logger.info('--without-gossip: this worker never takes part in gossip');
  }
  const releasePid = child || !config.pidfile ? () => undefined : claimPidfile(config.pidfile);
  if (releasePid === null) {
    logger.error(`pid file ${config.pidfile} holds a running process: is this worker already running?`);
    return 1;
  }
  try {
    // A worker that may be replaced (recycling, pool_restart) or writes to a log file runs under a supervisor:
    // this process, which starts it as a child and replaces it when it asks, as Celery's master does.
    if (!child && (recycles || config.logfile)) {
      return await supervise({ argv: process.argv.slice(2), logfile: config.logfile || undefined, logger });
    }
    return await runWorker(config, logger);
  } finally {
    releasePid();
  }
}

async function runWorker(config: ValuesOf<typeof SETTINGS>, logger: Logger): Promise<number> {
  const v8 = boundHeapGrowth();
  logger.info('smarter-worker starting', { config: describeConfig(SETTINGS, config), v8 });
  // Before the worker and the outside clients exist (OTEL_TRACES_EXPORTER=otlp; off, nothing is loaded).
  await startTracing(process.env, config.brokerUrl, logger);
  let remoteStop: ((code?: number) => void) | undefined;
  // The pool connects lazily: a worker that only serves infrastructure tasks never opens it.
  const db = openSmarterDatabase(config, config.mysqlPoolSize);
  const { app } = createWorker({
    config,
    tasks: [],
    taskStubs: smarterTaskStubs(config),
    deps: {
      db,
      cloud: withLedger(openCloud(config, logger), new InfrastructureLedger(db, logger.child({ component: 'ledger' }))),
    },
    logger,
    defaultQueue: config.operationalQueue,
    conf: (withDefaults) => celeryConf(SETTINGS, config, withDefaults),
    onRemoteShutdown: () => remoteStop?.(),
    onRecycled: () => recycled?.(),
    onBrokerGaveUp: () => remoteStop?.(1),
  });
  let recycled: (() => void) | undefined;
  const exit = new Promise<number>((resolve) => {
    remoteStop = (code = 0) => resolve(code);
    recycled = () => resolve(RECYCLE_EXIT_CODE);
    installSignalHandlers(app, logger, resolve);
  });
  await app.start();
  const code = await exit;
  await db.close().catch(() => undefined);
  await stopTracing();
  return code;
}

/** `smarter-worker delayed`: what waits in the delay topology, without consuming it. */
async function printDelayed(url: string, logger: Logger, redis: RedisTransport, tls: TlsSettings): Promise<number> {
  const broker = createBroker({ url, logger, redis, tls });
  await broker.connect();
  try {
    const levels = await broker.delayedStats();
    const total = levels.reduce((n, l) => n + l.messages, 0);
    process.stdout.write('level  queue               messages  due within\n');
    for (const l of levels.filter((x) => x.messages > 0)) {
      process.stdout.write(
        `${String(l.level).padStart(5)}  ${l.queue.padEnd(18)}  ${String(l.messages).padStart(8)}  ${formatDuration(l.dueWithinSeconds)}\n`,
      );
    }
    const next = nextDueWithinSeconds(levels);
    process.stdout.write(
      `${total} delayed message(s)${next === null ? '' : `; the next is due within ${formatDuration(next)}`}\n`,
    );
    return 0;
  } finally {
    await broker.close();
  }
}

function takeQueueFlag(argv: readonly string[]): { rest: string[]; queue: string | undefined } {
  const rest: string[] = [];
  let queue: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] ?? '';
    if (a === '--queue') queue = argv[++i];
    else if (a.startsWith('--queue=')) queue = a.slice('--queue='.length);
    else rest.push(a);
  }
  return { rest, queue };
}

/** `smarter-worker delayed purge|release [--queue Q]`: what is parked for a queue (or all) removed, or moved back into its queue now. */
async function actOnDelayed(
  action: 'purge' | 'release',
  queue: string | undefined,
  url: string,
  logger: Logger,
  redis: RedisTransport,
  tls: TlsSettings,
): Promise<number> {
  const broker = createBroker({ url, logger, redis, tls });
  await broker.connect();
  try {
    return await runDelayedAction(broker, {
      action,
      queue,
      out: (line) => void process.stdout.write(`${line}\n`),
      tty: process.stderr.isTTY ? process.stderr : undefined,
    });
  } finally {
    await broker.close();
  }
}
