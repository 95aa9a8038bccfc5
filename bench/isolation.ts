/**
 * Issue 3's benchmark, ADR-030's isolation claim: an operational stream (200 tasks/s of celery.accumulate,
 * latency = publish → done as stored by the worker) with and without 2,000 infrastructure checks waiting
 * and rescheduling themselves every 3 s; our workers and Python Celery's (apply_async(countdown=3)), laid out
 * as ADR-030 deploys them (one worker on the operational queue, one on the infrastructure queue) with
 * Smarter's defaults (early ack, prefetch 4 × concurrency). Then our worker's RSS with 10 and with 100,000
 * checks waiting.
 *
 *   npm run build && node dist/bench/isolation.js [rate=200] [seconds=15] [checks=2000]
 *
 * BENCH_PIN=1 gives each deployment its own core, as separate pods would have: the operational worker and the
 * operational producer on CPU 1, the infrastructure worker and the storm's producer on CPU 0 (the broker and
 * Redis are shared, as in production). BENCH_SKIP_RSS=1 skips the 100,000-check memory run.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { chartGroups } from './chart-limits.js';
import { record } from './record.js';
import { AMQP_URL, PYTHON, REDIS_URL, consumersUp, deleteQueue, readyCount, rssMb, stop } from './support.js';

const exec = promisify(execFile);
const rate = Number(process.argv[2] ?? 200);
const seconds = Number(process.argv[3] ?? 15);
const checks = Number(process.argv[4] ?? 2000);
const OPS = `bench_ops_${process.pid}`;
const INFRA = `bench_infra_${process.pid}`;
const env = { ...process.env, CELERY_BROKER_URL: AMQP_URL, CELERY_RESULT_BACKEND: REDIS_URL };

interface Latency {
  count: number;
  missing: number;
  p50: number;
  p99: number;
}

const PIN = process.env.BENCH_PIN === '1';
// BENCH_LIMITS=1 (bench/isolation-limits.ts sets it): each worker in a cgroup with its chart's CPU request and limit.
const LIMITS = process.env.BENCH_LIMITS === '1' ? chartGroups(`bench-${process.pid}`) : undefined;
const SUFFIX = process.env.BENCH_SYSTEM_SUFFIX ?? '';
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

async function scenario(name: string, start: (queue: string) => ChildProcess) {
  for (const q of [OPS, INFRA]) await deleteQueue(q);
  const worker = start(OPS);
  const infraWorker = start(INFRA);
  await consumersUp(OPS);
  await consumersUp(INFRA);
  const idle = JSON.parse(await py('stream', OPS, String(rate), String(seconds))) as Latency;
  await py('storm', INFRA, String(checks), '3');
  await new Promise((r) => setTimeout(r, 5000));
  const samples: number[] = [];
  const sampling = (async () => {
    for (let i = 0; i < 4; i++) {
      samples.push(await unacked());
      await new Promise((r) => setTimeout(r, (seconds * 1000) / 5));
    }
  })();
  const storm = JSON.parse(await py('stream', OPS, String(rate), String(seconds))) as Latency;
  await sampling;
  const rss = rssMb(worker.pid);
  const infraRss = rssMb(infraWorker.pid);
  await stop(worker, 'SIGQUIT');
  await stop(infraWorker, 'SIGQUIT');
  for (const q of [OPS, INFRA]) await deleteQueue(q);
  return { name, idle, storm, unacked: Math.max(...samples), rss, infraRss };
}

// The check task is declared on the infrastructure queue; the bench worker takes [ops, infra] from -Q.
const ours = (queue: string) =>
  spawn(...pinned(cpuOf(queue), process.execPath, ['dist/bench/iso-worker.js', '-Q', queue === OPS ? OPS : `${INFRA}`, '-c', '4', '-l', 'warning'], true), {
    env: { ...env, ...(queue === INFRA ? { BENCH_INFRA_QUEUE: INFRA } : {}) },
    stdio: 'ignore',
  });
const python = (queue: string) =>
  spawn(...pinned(cpuOf(queue), PYTHON, ['-m', 'celery', '-A', 'benchiso', 'worker', '-Q', queue, '-n', `${queue}@%h`, '-c', '4', '-l', 'warning', '--without-gossip', '--without-mingle'], true), {
    cwd: 'bench/python',
    env,
    stdio: 'ignore',
  });

const rows = [await scenario(`smarter-worker${SUFFIX}`, ours), await scenario(`python-celery${SUFFIX}`, python)];
record(
  rows.flatMap((r) =>
    (['p50', 'p99'] as const).flatMap((p) => [
      { bench: 'isolation', system: r.name, metric: `ops ${p}`, unit: 'ms', value: r.idle[p] ?? NaN, x: 0 },
      { bench: 'isolation', system: r.name, metric: `ops ${p}`, unit: 'ms', value: r.storm[p] ?? NaN, x: checks },
    ]),
  ),
);
const f = (x: number | null) => (x === null ? 'n/a' : x.toFixed(1));
process.stdout.write(`\n${rate} operational tasks/s for ${seconds} s; storm = ${checks} checks rescheduling every 3 s; one worker per queue (ADR-030), -c 4 each${PIN ? '; each deployment pinned to its own core' : ''}${LIMITS ? `; each worker in a cgroup with its chart's CPU (operational ${JSON.stringify(LIMITS.limits.ops)}, infrastructure ${JSON.stringify(LIMITS.limits.infra)}), the broker alone on core 0` : ''}\n\n`);
process.stdout.write('| workers | p50 idle ms | p99 idle ms | p50 storm ms | p99 storm ms | p99 storm / idle | unacked during storm | RSS MB ops / infra | lost |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n');
for (const r of rows) {
  process.stdout.write(
    `| ${r.name} | ${f(r.idle.p50)} | ${f(r.idle.p99)} | ${f(r.storm.p50)} | ${f(r.storm.p99)} | ${(r.storm.p99 / r.idle.p99).toFixed(2)} | ${r.unacked} | ${r.rss} / ${r.infraRss} | ${r.idle.missing + r.storm.missing} |\n`,
  );
}

// RSS whether 10 or 100,000 checks wait (ours: they wait in the broker, not in the worker).
if (process.env.BENCH_SKIP_RSS === '1') {
  LIMITS?.remove();
  process.exit(0);
}
for (const q of [OPS, INFRA]) await deleteQueue(q);
const w = ours(INFRA);
await consumersUp(INFRA);
// A 10-minute countdown: long enough to measure while they wait, short enough that the 100,000 parked
// messages (dropped by the sink once their queue is gone) leave the shared delay levels soon after.
await py('storm', INFRA, '10', '600');
await new Promise((r) => setTimeout(r, 3000));
const rss10 = rssMb(w.pid);
await py('storm', INFRA, '100000', '600');
while ((await readyCount(INFRA)) > 0) await new Promise((r) => setTimeout(r, 500));
await new Promise((r) => setTimeout(r, 3000));
const rss100k = rssMb(w.pid);
const held = await unacked();
await stop(w, 'SIGQUIT');
for (const q of [OPS, INFRA]) await deleteQueue(q);
process.stdout.write(`\nsmarter-worker RSS with 10 checks waiting: ${rss10} MB; with 100,010 waiting: ${rss100k} MB; unacked then: ${held}\n`);
LIMITS?.remove();
