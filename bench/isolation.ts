/**
 * ADR-030's isolation claim: an operational stream (200 tasks/s of celery.accumulate,
 * latency = publish → done as stored by the worker) with and without N infrastructure checks waiting and
 * rescheduling themselves every `every` seconds; our workers and Python Celery's (apply_async(countdown)), laid
 * out as ADR-030 deploys them (one worker on the operational queue, one on the infrastructure queue) with
 * Smarter's defaults (early ack, prefetch 4 × concurrency): ours at the Helm chart's concurrency (an async slot
 * costs no process; BENCH_ISO_CONCURRENCY=4 gives both ours -c 4), Python's prefork at -c 4. For ours, also the operational worker's own wait
 * (delivery → task start, bench/wait-probe.ts), its event-loop delay and GC pauses, in each phase.
 *
 *   npm run build && node dist/bench/isolation.js [rate=200] [seconds=15] [checks=2000] [every=3]
 *
 * At every=3 the checks start together (bursts of N every 3 s: the stress); at any other interval they start
 * staggered over one interval, as deployments created at different times are (a steady N/every reschedules/s:
 * 2,000 deployments at Smarter's 60 s certificate interval are 33/s).
 *
 * BENCH_PIN=1 gives each deployment its own core, as separate pods would have: the operational worker and the
 * operational producer on CPU 1, the infrastructure worker and the storm's producer on CPU 0 (the broker and
 * Redis are shared, as in production). The memory of a worker with checks waiting is bench/memory.ts's.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { chartConcurrency, chartGroups } from './chart-limits.js';
import { type Sample, record } from './record.js';
import { rotated } from './stats.js';
import {
  AMQP_URL,
  PYTHON,
  pythonWorkerArgs,
  REDIS_URL,
  REPETITION,
  askProbe,
  consumersUp,
  deleteQueue,
  rssMb,
  sleep,
  stop,
} from './support.js';
import type { WaitReport } from './wait-probe.js';

const exec = promisify(execFile);
const rate = Number(process.argv[2] ?? 200);
const seconds = Number(process.argv[3] ?? 15);
const checks = Number(process.argv[4] ?? 2000);
const every = Number(process.argv[5] ?? 3);
const spread = every !== 3;
const OPS = `bench_ops_${process.pid}`;
const INFRA = `bench_infra_${process.pid}`;
const WAIT_OUT = path.join(os.tmpdir(), `bench-wait-${process.pid}.jsonl`);
const env = { ...process.env, CELERY_BROKER_URL: AMQP_URL, CELERY_RESULT_BACKEND: REDIS_URL };

interface Latency {
  count: number;
  missing: number;
  p50: number;
  p99: number;
}

// Ours at the chart's -c (operational 64, infrastructure 16: an async slot costs no process), unless
// BENCH_ISO_CONCURRENCY gives both one; Python's prefork at -c 4 (processes, on 2 cores).
const OURS_C = process.env.BENCH_ISO_CONCURRENCY
  ? { ops: Number(process.env.BENCH_ISO_CONCURRENCY), infra: Number(process.env.BENCH_ISO_CONCURRENCY) }
  : chartConcurrency();
const PYTHON_C = 4;
const PIN = process.env.BENCH_PIN === '1';
// BENCH_LIMITS=1 (bench/isolation-limits.ts sets it): each worker in a cgroup with its chart's CPU request and limit.
const LIMITS = process.env.BENCH_LIMITS === '1' ? chartGroups(`bench-${process.pid}`) : undefined;
const SUFFIX = process.env.BENCH_SYSTEM_SUFFIX ?? '';
// The storm's checks run their first round before the stormy stream starts, and the broker's unacknowledged count
// is sampled during it (rabbitmqctl takes a second or two a sample); BENCH_ISO_SETTLE_MS and BENCH_ISO_SAMPLES
// shorten both for the smoke step (`--quick`), which only has to run every phase.
const SETTLE_MS = Number(process.env.BENCH_ISO_SETTLE_MS ?? 5000);
const UNACKED_SAMPLES = Number(process.env.BENCH_ISO_SAMPLES ?? 4);
/** The command line, pinned to a core when BENCH_PIN is set; a worker inside its deployment's cgroup with BENCH_LIMITS. */
function pinned(cpu: number, cmd: string, args: string[], worker = false): [string, string[]] {
  if (LIMITS && worker) return (cpu === 1 ? LIMITS.ops : LIMITS.infra).wrap(cmd, args);
  return PIN ? ['taskset', ['-c', String(cpu), cmd, ...args]] : [cmd, args];
}
const cpuOf = (queue: string) => (queue === OPS ? 1 : 0);

async function py(...args: string[]): Promise<string> {
  const [cmd, argv] = pinned(args[1] === INFRA ? 0 : 1, PYTHON, ['bench/python/benchiso.py', ...args]);
  const { stdout } = await exec(cmd, argv, { env, maxBuffer: 1 << 24, timeout: 600_000 });
  return stdout.trim();
}

async function unacked(): Promise<number> {
  const node = process.env.BENCH_RABBIT_NODE ? ['-n', process.env.BENCH_RABBIT_NODE] : [];
  const { stdout } = await exec('rabbitmqctl', [...node, 'list_queues', '-q', 'name', 'messages_unacknowledged']);
  return stdout
    .split('\n')
    .filter((l) => [OPS, INFRA].includes(l.split('\t')[0] ?? ''))
    .reduce((n, l) => n + Number(l.split('\t')[1] ?? 0), 0);
}

/** The worker's own wait since the last ask (bench/wait-probe.ts); undefined for a worker without the probe. */
const askWait = (worker: ChildProcess, probed: boolean) =>
  probed ? askProbe<WaitReport>(worker, WAIT_OUT) : Promise.resolve(undefined);

interface System {
  name: string;
  start: (queue: string) => ChildProcess;
  probed: boolean;
}

async function scenario({ name, start, probed }: System) {
  for (const q of [OPS, INFRA]) await deleteQueue(q);
  const worker = start(OPS);
  const infraWorker = start(INFRA);
  await consumersUp(OPS);
  await consumersUp(INFRA);
  await askWait(worker, probed);
  const idle = JSON.parse(await py('stream', OPS, String(rate), String(seconds))) as Latency;
  const idleWait = await askWait(worker, probed);
  await py('storm', INFRA, String(checks), String(every), ...(spread ? ['spread'] : []));
  await sleep(SETTLE_MS);
  await askWait(worker, probed);
  const samples: number[] = [];
  const sampling = (async () => {
    for (let i = 0; i < UNACKED_SAMPLES; i++) {
      samples.push(await unacked());
      await sleep((seconds * 1000) / (UNACKED_SAMPLES + 1));
    }
  })();
  const storm = JSON.parse(await py('stream', OPS, String(rate), String(seconds))) as Latency;
  const stormWait = await askWait(worker, probed);
  await sampling;
  const rss = rssMb(worker.pid);
  const infraRss = rssMb(infraWorker.pid);
  await stop(worker, 'SIGQUIT');
  await stop(infraWorker, 'SIGQUIT');
  for (const q of [OPS, INFRA]) await deleteQueue(q);
  return { name, idle, storm, idleWait, stormWait, unacked: Math.max(...samples), rss, infraRss };
}

// The check task is declared on the infrastructure queue; the bench worker takes [ops, infra] from -Q.
const ours = (queue: string) =>
  spawn(
    ...pinned(
      cpuOf(queue),
      process.execPath,
      [
        'dist/bench/iso-worker.js',
        '-Q',
        queue,
        '-c',
        String(queue === OPS ? OURS_C.ops : OURS_C.infra),
        '-l',
        'warning',
      ],
      true,
    ),
    {
      env: { ...env, ...(queue === INFRA ? { BENCH_INFRA_QUEUE: INFRA } : { BENCH_WAIT_OUT: WAIT_OUT }) },
      stdio: 'ignore',
    },
  );
const python = (queue: string) =>
  spawn(...pinned(cpuOf(queue), PYTHON, pythonWorkerArgs('benchiso', queue, PYTHON_C, ['-n', `${queue}@%h`]), true), {
    cwd: 'bench/python',
    env,
    stdio: 'ignore',
  });

const systems: System[] = [
  { name: `smarter-worker${SUFFIX}`, start: ours, probed: true },
  { name: `python-celery${SUFFIX}`, start: python, probed: false },
];
const rows = [];
for (const s of rotated(systems, REPETITION)) rows.push(await scenario(s));
fs.rmSync(WAIT_OUT, { force: true });
rows.sort((a, b) => systems.findIndex((s) => s.name === a.name) - systems.findIndex((s) => s.name === b.name));

// The 3 s stress keeps the metric names of the first reports; another interval is named by it.
const tag = every === 3 ? '' : `, every ${every} s`;
const out: Sample[] = [];
const add = (system: string, metric: string, value: number, x: number) =>
  out.push({ bench: 'isolation', system, metric: `${metric}${tag}`, unit: 'ms', value, x });
for (const r of rows) {
  for (const p of ['p50', 'p99'] as const) {
    add(r.name, `ops ${p}`, r.idle[p] ?? NaN, 0);
    add(r.name, `ops ${p}`, r.storm[p] ?? NaN, checks);
  }
  out.push({
    bench: 'isolation',
    system: r.name,
    metric: `ops p99 storm / idle${tag}`,
    unit: 'ratio',
    value: r.storm.p99 / r.idle.p99,
    x: checks,
  });
  for (const [x, w] of [
    [0, r.idleWait],
    [checks, r.stormWait],
  ] as const) {
    if (!w) continue;
    add(r.name, 'worker wait p99', w.p99, x);
    add(r.name, 'event-loop delay p99', w.loopP99, x);
    add(r.name, 'GC pause max', w.gcMaxMs, x);
  }
}
record(out);

const f = (x: number | null | undefined, d = 1) =>
  x === null || x === undefined || !Number.isFinite(x) ? 'n/a' : x.toFixed(d);
const storming = spread
  ? `${checks} checks rescheduling every ${every} s, staggered (${(checks / every).toFixed(0)} reschedules/s)`
  : `${checks} checks rescheduling together every ${every} s`;
process.stdout.write(
  `\n${rate} operational tasks/s for ${seconds} s; storm = ${storming}; one worker per queue (ADR-030), ours -c ${OURS_C.ops} (operational) / ${OURS_C.infra} (infrastructure), Python's -c ${PYTHON_C} each${PIN ? '; each deployment pinned to its own core' : ''}${LIMITS ? `; each worker in a cgroup with its chart's CPU (operational ${JSON.stringify(LIMITS.limits.ops)}, infrastructure ${JSON.stringify(LIMITS.limits.infra)}), the broker alone on core 0` : ''}\n\n`,
);
process.stdout.write(
  '| workers | p50 idle ms | p99 idle ms | p50 storm ms | p99 storm ms | p99 storm / idle | unacked during storm | RSS MB ops / infra | lost |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n',
);
for (const r of rows) {
  process.stdout.write(
    `| ${r.name} | ${f(r.idle.p50)} | ${f(r.idle.p99)} | ${f(r.storm.p50)} | ${f(r.storm.p99)} | ${(r.storm.p99 / r.idle.p99).toFixed(2)} | ${r.unacked} | ${r.rss} / ${r.infraRss} | ${r.idle.missing + r.storm.missing} |\n`,
  );
}
process.stdout.write(
  "\nThe operational worker's own wait (delivery → task start), event-loop delay and GC, ms\n\n| workers | phase | tasks | wait p50 | wait p99 | wait max | waited for a slot | p99 of the others | loop delay p99 | loop max | loop busy | CPU | GC pauses | GC max |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
);
for (const r of rows) {
  for (const [phase, w] of [
    ['idle', r.idleWait],
    ['storm', r.stormWait],
  ] as const) {
    if (w) {
      process.stdout.write(
        `| ${r.name} | ${phase} | ${w.count} | ${f(w.p50, 3)} | ${f(w.p99, 3)} | ${f(w.max, 2)} | ${w.slotBound} | ${f(w.freeP99, 3)} | ${f(w.loopP99, 2)} | ${f(w.loopMax, 2)} | ${f(w.loopBusy * 100, 1)} % | ${f(w.cpuShare * 100, 1)} % | ${w.gcCount} (${w.gcMajor} major) | ${f(w.gcMaxMs, 2)} |\n`,
      );
    }
  }
}
LIMITS?.remove();
