/**
 * Our worker for the isolation, latency and memory benchmarks: Smarter's defaults, plus a check that
 * reschedules itself and bench.stamp, which returns the time it started on CLOCK_MONOTONIC (publish → task start). With
 * BENCH_WAIT_OUT set, it also measures its own wait, delivery → task start (wait-probe.ts); with BENCH_HEAP_OUT,
 * it reports its heap after a full GC (heap-probe.ts).
 */
import * as z from 'zod';
import { createWorker } from '../lib/app/app.js';
import { loadConfig } from '../lib/config/settings.js';
import { WORKER_SETTINGS } from '../lib/app/worker-settings.js';
import { createLogger } from '../lib/logger.js';
import { defineTask } from '../lib/registry/define-task.js';
import { installSignalHandlers } from '../lib/app/signals.js';
import { boundHeapGrowth } from '../lib/app/heap-growth.js';
import { installHeapProbe } from './heap-probe.js';
import { installWaitProbe } from './wait-probe.js';

// As the shipped worker's entry does (tasks/worker-main.ts), so that its memory is the shipped worker's.
boundHeapGrowth();
const { values } = loadConfig(WORKER_SETTINGS, process.env, process.argv.slice(2));
const ops = values.queues[0] ?? 'bench_ops';
const infra = process.env.BENCH_INFRA_QUEUE ?? 'bench_infra';
const check = defineTask({
  name: 'bench.check',
  queue: infra,
  ignoreResult: true,
  params: z.object({ every: z.number(), attempt: z.number().int().default(0) }),
  run: async ({ every }, ctx) => ctx.checkAgain({ after: every }),
});
// CLOCK_MONOTONIC in seconds, the clock of the Python producer's send stamps (bench/python/resultclock.py).
const stamp = defineTask({
  name: 'bench.stamp',
  queue: ops,
  params: z.object({}),
  run: async () => Number(process.hrtime.bigint()) / 1e9,
});
const logger = createLogger({ level: values.logLevel, json: true });
const { app, broker, registry, worker } = createWorker<unknown>({
  config: values,
  tasks: [check, stamp],
  deps: {},
  logger,
  defaultQueue: ops,
});
// BENCH_WAIT_OUT (bench/isolation.ts): measure this worker's own wait, delivery → task start (wait-probe.ts).
if (process.env.BENCH_WAIT_OUT) installWaitProbe(broker, registry, worker, process.env.BENCH_WAIT_OUT);
// BENCH_HEAP_OUT (bench/memory.ts): the heap after a full GC, on request (heap-probe.ts).
else if (process.env.BENCH_HEAP_OUT) installHeapProbe(process.env.BENCH_HEAP_OUT, process.env.BENCH_HEAP_SNAPSHOT);
installSignalHandlers(app, logger, (code) => process.exit(code));
await app.start();
