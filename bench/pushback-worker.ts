/**
 * Our worker for the push-back benchmark: Smarter's defaults and bench.quick, which stamps its finish (ms) on
 * `<key>:at` in the counter Redis (BENCH_COUNTER_URL), as bench/python/benchpush.py's does.
 */
import { Redis } from 'ioredis';
import * as z from 'zod';
import { createWorker } from '../lib/app/app.js';
import { installSignalHandlers } from '../lib/app/signals.js';
import { WORKER_SETTINGS } from '../lib/app/worker-settings.js';
import { loadConfig } from '../lib/config/settings.js';
import { createLogger } from '../lib/logger.js';
import { defineTask } from '../lib/registry/define-task.js';

const { values } = loadConfig(WORKER_SETTINGS, process.env, process.argv.slice(2));
const queue = values.queues[0] ?? 'bench_pushback';
const counter = new Redis(process.env.BENCH_COUNTER_URL ?? 'redis://127.0.0.1:6379/0');
const quick = defineTask({
  name: 'bench.quick',
  queue,
  ignoreResult: true,
  params: z.object({ key: z.string() }),
  run: async ({ key }) => {
    await counter.rpush(`${key}:at`, Date.now());
  },
});
const logger = createLogger({ level: values.logLevel, json: true });
const { app } = createWorker<unknown>({ config: values, tasks: [quick], deps: {}, logger, defaultQueue: queue });
installSignalHandlers(app, logger, (code) => process.exit(code));
await app.start();
