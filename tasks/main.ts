#!/usr/bin/env node
/**
 * `smarter-worker`: Celery's worker flags (`-Q`, `-c`, `-n`, `-E`, `-l`, `--prefetch-multiplier`) and
 * Smarter's environment. Exit codes: 0 after a warm shutdown, 1 after a cold one, 2 for bad configuration.
 */
import { createWorker } from '../lib/app/app.js';
import { describeConfig, loadCommandLine, settingsTable } from '../lib/config/settings.js';
import { celeryConf } from '../lib/config/celery-conf.js';
import { type Subcommand, answerInfoFlags } from '../lib/config/usage.js';
import { type Logger, createLogger, exitFatal, exitFlushed } from '../lib/logger.js';
import { type RedisTransport, createBroker, redisOptionsOf } from '../lib/broker/create-broker.js';
import type { TlsSettings } from '../lib/config/tls.js';
import { formatDuration, nextDueWithinSeconds } from '../lib/broker/delayed.js';
import { installSignalHandlers } from '../lib/app/signals.js';
import { runDelayedAction } from './cli/delayed.js';
import { isCommand } from './cli/names.js';
import { openCloud } from './cloud/index.js';
import { InfrastructureLedger } from './infrastructure/ledger.js';
import { openDatabase } from './db/database.js';
import { smarterTasks } from './index.js';
import { SETTINGS } from './settings.js';

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
    name: 'dead-letter',
    summary:
      'list <queue> | replay <queue> [--task N] [--reason T] [--limit N] [--to Q]: read or replay a dead-letter queue.',
  },
];

async function main(argv: string[]): Promise<number> {
  if (isCommand(argv[0])) return (await import('./cli/commands.js')).runCommand(argv);
  const given = argv[0] === 'worker' ? argv.slice(1) : argv;
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
    process.stdout.write(`${settingsTable(SETTINGS)}\n`);
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
  logger.info('smarter-worker starting', { config: describeConfig(SETTINGS, config) });
  let remoteStop: (() => void) | undefined;
  // The pool connects lazily: a worker that only serves infrastructure tasks never opens it.
  const db = openDatabase({
    host: config.mysqlHost,
    port: config.mysqlPort,
    database: config.mysqlDatabase,
    user: config.mysqlUser,
    password: config.mysqlPassword,
    poolSize: config.mysqlPoolSize,
  });
  const { app } = createWorker({
    config,
    tasks: smarterTasks(config),
    deps: {
      db,
      cloud: {
        ...openCloud(config, logger),
        ledger: new InfrastructureLedger(db, logger.child({ component: 'ledger' })),
      },
    },
    logger,
    defaultQueue: config.operationalQueue,
    conf: (withDefaults) => celeryConf(SETTINGS, config, withDefaults),
    onRemoteShutdown: () => remoteStop?.(),
  });
  const exit = new Promise<number>((resolve) => {
    remoteStop = () => resolve(0);
    installSignalHandlers(app, logger, resolve);
  });
  await app.start();
  const code = await exit;
  await db.close().catch(() => undefined);
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

main(process.argv.slice(2)).then(exitFlushed, (err: unknown) => exitFatal('smarter-worker', err));
