/**
 * The worker's own wait, for the isolation benchmark (ADR-030): from a delivery reaching our
 * consumer callback to the task body starting, measured inside bench/iso-worker.ts without touching lib/: the
 * broker's `consume` handler and the registry's tasks are wrapped here, so the worker's normal path is unchanged.
 * Next to it, what could make it wait: the event loop's delay (a 1 ms timer's lateness, perf_hooks) and the GC
 * pauses. SIGUSR2 writes the numbers since the last SIGUSR2 to the file BENCH_WAIT_OUT, as one JSON line, and
 * starts over (the benchmark sends it after each phase: idle, storm).
 */
import fs from 'node:fs';
import {
  type EventLoopUtilization,
  PerformanceObserver,
  constants,
  monitorEventLoopDelay,
  performance,
} from 'node:perf_hooks';
import type { Broker } from '../lib/broker/broker.js';
import type { AnyTask } from '../lib/registry/define-task.js';
import type { Registry } from '../lib/registry/registry.js';
import type { Worker } from '../lib/worker/worker.js';
import { percentile } from './stats.js';

export interface WaitReport {
  /** Tasks started in the phase. */
  count: number;
  /** Delivery → task start, ms. */
  p50: number;
  p99: number;
  max: number;
  /** Deliveries that found every slot taken (they waited for one), and the wait p99 of the others. */
  slotBound: number;
  freeP99: number;
  /** Event-loop delay of a 1 ms timer, ms. */
  loopP99: number;
  loopMax: number;
  /** Event-loop utilization (busy share, wall time) over the phase, and the CPU time the process had (user +
   * system, as a share of the phase): busy well above CPU is time the loop was running but the process was not. */
  loopBusy: number;
  cpuShare: number;
  gcCount: number;
  /** Of which major (mark-compact) collections. */
  gcMajor: number;
  gcMaxMs: number;
  gcTotalMs: number;
}

export function installWaitProbe(
  broker: Broker,
  registry: Registry<unknown>,
  worker: Pick<Worker, 'active' | 'concurrency'>,
  out: string,
): void {
  const arrived = new Map<string, { at: number; slotBound: boolean }>();
  let waits: number[] = [];
  let free: number[] = [];
  let slotBound = 0;
  const consume = broker.consume.bind(broker);
  broker.consume = (queue, handler, options) =>
    consume(
      queue,
      (d) => {
        const id = d.raw.properties.correlationId;
        if (id) arrived.set(id, { at: performance.now(), slotBound: worker.active.size >= worker.concurrency });
        handler(d);
      },
      options,
    );
  const wrapped = new Map<string, AnyTask<unknown>>();
  const find = registry.find.bind(registry);
  registry.find = (name) => {
    const task = find(name);
    if (!task) return task;
    let w = wrapped.get(name);
    if (!w) {
      w = {
        ...task,
        run: (params, ctx) => {
          const a = arrived.get(ctx.id);
          if (a !== undefined) {
            const wait = performance.now() - a.at;
            waits.push(wait);
            if (a.slotBound) slotBound++;
            else free.push(wait);
            arrived.delete(ctx.id);
          }
          return task.run(params, ctx);
        },
      };
      wrapped.set(name, w);
    }
    return w;
  };

  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  let elu: EventLoopUtilization = performance.eventLoopUtilization();
  let cpu = process.cpuUsage();
  let since = performance.now();
  let gc: number[] = [];
  let gcMajor = 0;
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      gc.push(e.duration);
      if (
        (e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR
      ) {
        gcMajor++;
      }
    }
  }).observe({ entryTypes: ['gc'] });

  process.on('SIGUSR2', () => {
    const now = performance.eventLoopUtilization();
    const used = process.cpuUsage(cpu);
    const report: WaitReport = {
      count: waits.length,
      p50: percentile(waits, 50),
      p99: percentile(waits, 99),
      max: Math.max(0, ...waits),
      slotBound,
      freeP99: percentile(free, 99),
      // The histogram counts the timer's whole interval: its lateness is what exceeds the 1 ms resolution.
      loopP99: Math.max(0, loop.percentile(99) / 1e6 - 1),
      loopMax: Math.max(0, loop.max / 1e6 - 1),
      loopBusy: performance.eventLoopUtilization(now, elu).utilization,
      cpuShare: (used.user + used.system) / 1000 / (performance.now() - since),
      gcCount: gc.length,
      gcMajor,
      gcMaxMs: Math.max(0, ...gc),
      gcTotalMs: gc.reduce((a, b) => a + b, 0),
    };
    fs.appendFileSync(out, `${JSON.stringify(report)}\n`);
    waits = [];
    free = [];
    slotBound = 0;
    gc = [];
    gcMajor = 0;
    elu = now;
    cpu = process.cpuUsage();
    since = performance.now();
    loop.reset();
    arrived.clear();
  });
}
