#!/usr/bin/env node
/**
 * `smarter-worker`: Celery's worker flags (`-Q`, `-c`, `-n`, `-E`, `-l`, `--prefetch-multiplier`) and
 * Smarter's environment. Exit codes: 0 after a warm shutdown, 1 after a cold one, 2 for bad configuration.
 */
import { createWorker } from '../lib/app.js';
import { describeConfig, loadConfig, settingsTable } from '../lib/config/settings.js';
import { ConfigError, coerceError } from '../lib/errors.js';
import { createLogger } from '../lib/logger.js';
import { installSignalHandlers } from '../lib/worker/signals.js';
import { smarterTasks } from './index.js';
import { SETTINGS } from './settings.js';


async function main(argv: string[]): Promise<number> {
  const args = argv[0] === 'worker' ? argv.slice(1) : argv;
  let loaded;
  try {
    loaded = loadConfig(SETTINGS, process.env, args);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`smarter-worker: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
  const { values: config, positionals } = loaded;
  if (positionals[0] === 'settings') {
    process.stdout.write(`${settingsTable(SETTINGS)}\n`);
    return 0;
  }
  if (positionals.length > 0) {
    process.stderr.write(`smarter-worker: unknown command ${JSON.stringify(positionals[0])}\n`);
    return 2;
  }
  const logger = createLogger({ level: config.logLevel });
  logger.info('smarter-worker starting', { config: describeConfig(SETTINGS, config) });
  const { worker, broker } = createWorker({
    config,
    tasks: smarterTasks(),
    deps: {},
    logger,
    defaultQueue: config.operationalQueue,
  });
  const exit = new Promise<number>((resolve) => {
    installSignalHandlers(worker, logger, resolve);
  });
  await broker.connect();
  await worker.start();
  return exit;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`smarter-worker: ${coerceError(err).stack}\n`);
    process.exit(1);
  },
);
