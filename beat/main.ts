#!/usr/bin/env node
/**
 * `smarter-beat`: sends Smarter's schedule. `smarter-beat check` verifies the queue contract (ADR-030) against
 * the task catalog and the chart/compose deployments, and exits 1 when it does not hold. Exit codes: 0 after
 * SIGTERM/SIGINT, 1 for a broken contract, 2 for a bad configuration.
 */
import { createServer } from 'node:http';
import { readOnly } from '../lib/control/read-only.js';
import { createBroker, redisOptionsOf } from '../lib/broker/create-broker.js';
import { describeConfig, loadCommandLine } from '../lib/config/settings.js';
import { type Subcommand, answerInfoFlags } from '../lib/config/usage.js';
import { createLogger, exitFatal, exitFlushed } from '../lib/logger.js';
import { startTracing, stopTracing } from '../lib/tracing/tracing.js';
import { SMARTER_CATALOG } from '../tasks/catalog.js';
import { smarterTasks } from '../tasks/index.js';
import { SMARTER_SETTINGS } from '../tasks/settings.js';
import { Beat } from './beat.js';
import { checkSchedule } from './check.js';
import { deploymentConsumers } from './deployments.js';
import { BEAT_SETTINGS } from './settings.js';
import { smarterSchedule } from '../tasks/beat-schedule.js';
import { lockTimeoutMs, redBeat } from './redbeat.js';
import { FileStore } from './store.js';

const BEAT_PATHS = new Set(['/healthz', '/metrics']);

const COMMANDS: Subcommand[] = [
  { name: 'run', summary: "Send Smarter's schedule (the default)." },
  {
    name: 'check [dir]',
    summary:
      'Check the queue contract (ADR-030) against the task catalog and the chart/compose deployments in dir (default .); exit 1 when it does not hold.',
  },
  {
    name: 'contract',
    summary:
      "--smarter <checkout> [--json]: compare a Smarter checkout's Beat schedule (and the queue settings it names) with this one; exit 1 when they differ.",
  },
];

async function main(argv: string[]): Promise<number> {
  if (argv[0] === 'contract') return contract(argv.slice(1));
  const info = answerInfoFlags(argv, {
    program: 'smarter-beat',
    summary: "Smarter's Beat: sends the periodic tasks to the broker, one replica at a time.",
    settings: BEAT_SETTINGS,
    commands: COMMANDS,
  });
  if (info !== null) return info;
  const loaded = loadCommandLine('smarter-beat', BEAT_SETTINGS, process.env, argv);
  if (!loaded) return 2;
  const { values: config, positionals } = loaded;
  const command = positionals[0] ?? 'run';
  if (command !== 'run' && command !== 'check') {
    process.stderr.write(`smarter-beat: unknown command ${JSON.stringify(command)} (run, check)\n`);
    return 2;
  }
  const entries = smarterSchedule(config);
  // The check's view of the tasks uses the defaults of the other Smarter settings: only names and queues matter.
  const implemented = new Map(
    smarterTasks({
      ...config,
      maxRetries: SMARTER_SETTINGS.maxRetries.default,
      retryBackoff: SMARTER_SETTINGS.retryBackoff.default,
    }).map((t) => [t.name, t.queue]),
  );
  const report = checkSchedule({
    entries,
    catalog: SMARTER_CATALOG,
    queues: config,
    implemented,
    consumers:
      command === 'check' ? deploymentConsumers(positionals[1] ?? '.') : new Map<string, Map<string, string[]>>(),
  });
  if (command === 'check') {
    process.stdout.write(`${report.lines.join('\n')}\n`);
    return report.ok ? 0 : 1;
  }
  const logger = createLogger({ level: config.logLevel });
  if (!report.ok) {
    for (const p of report.problems) logger.error(`smarter-beat: ${p}`);
    return 1;
  }
  logger.info('smarter-beat starting', { config: describeConfig(BEAT_SETTINGS, config) });
  // Off unless OTEL_TRACES_EXPORTER=otlp; on, each send is a publish span whose context its message carries.
  const traced = await startTracing(process.env, config.brokerUrl, logger);
  const broker = createBroker({
    url: config.brokerUrl,
    logger,
    connectionName: 'smarter-beat',
    redis: redisOptionsOf(config.brokerTransportOptions),
    tls: config.brokerUseSsl,
    connectTimeoutMs: config.brokerConnectionTimeout * 1000,
  });
  const lockMs = lockTimeoutMs(config.redbeatLockTimeout, config.maxLoopInterval);
  if (config.redisUrl && lockMs <= config.maxLoopInterval * 1000) {
    logger.warn(
      `smarter-beat: the lock timeout (${lockMs / 1000} s) is not longer than the loop interval (${config.maxLoopInterval} s): the lock may expire between two extensions, and the sender change`,
    );
  }
  // With Redis, RedBeat's keys and lock (one scheduler with any RedBeat there); otherwise a file and the broker's lock.
  const where = config.redisUrl
    ? redBeat({
        url: config.redisUrl,
        keyPrefix: config.redbeatKeyPrefix,
        lockKey: config.redbeatLockKey,
        lockTimeoutMs: lockMs,
        logger,
      })
    : { store: new FileStore(config.scheduleFile), lock: broker.lock(config.lockName) };
  const beat = new Beat({
    entries,
    store: where.store,
    broker: traced?.broker(broker) ?? broker,
    lock: where.lock,
    logger,
    maxLoopMs: config.maxLoopInterval * 1000,
  });
  const http =
    config.httpPort > 0
      ? createServer((req, res) => {
          const request = readOnly(req, res, BEAT_PATHS);
          if (!request) return;
          if (request.path === '/metrics') {
            void beat.metrics.registry
              .metrics()
              .then((text) => request.send(200, text, beat.metrics.registry.contentType));
          } else request.send(200, 'ok\n');
        }).listen(config.httpPort)
      : null;
  await beat.start();
  // Later signals are ignored: Beat stops within a tick, and a second Ctrl-C must not kill it mid-write.
  await new Promise<void>((resolve) => {
    process.on('SIGTERM', () => resolve());
    process.on('SIGINT', () => resolve());
  });
  logger.info('smarter-beat stopping');
  http?.close();
  await beat.stop();
  await stopTracing();
  return 0;
}

/** `smarter-beat contract --smarter <checkout> [--json]`: its own flags only; no broker, no settings. */
async function contract(argv: string[]): Promise<number> {
  const { takeCommandFlags, UsageError } = await import('../tasks/cli/options.js');
  const { CONTRACT_FLAGS, contractCommand } = await import('../tasks/cli/contract/index.js');
  try {
    const { own, rest } = takeCommandFlags(argv, CONTRACT_FLAGS);
    if (rest.length > 0) throw new UsageError(`unexpected ${rest.join(' ')}`);
    return await contractCommand(own, 'beat', (line) => void process.stdout.write(`${line}\n`));
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`smarter-beat: ${err.message}\n`);
    return 2;
  }
}

main(process.argv.slice(2)).then(exitFlushed, (err: unknown) => exitFatal('smarter-beat', err));
