/**
 * The broker's cost per reschedule: RabbitMQ's own CPU seconds (its Erlang VM's utime + stime, from /proc)
 * per 1,000 check reschedules, with the delay levels as quorum queues and as classic durable queues. Each
 * variant gets a RabbitMQ node of its own (so no other load is counted and the two queue types never meet under
 * one name), our worker with C checks rescheduling themselves every E seconds through the delay topology; the
 * node's idle CPU over the same time is subtracted. For contrast, Python Celery's worker on a node of its own, which
 * holds countdowns unacked in memory instead (no delay topology; the cost ADR-030 moves to the broker).
 *
 *   npm run build && node dist/bench/broker-cpu.js [checks=500] [seconds=20] [every=3] [types=quorum,classic,python]
 *
 * The idle CPU is read over `seconds`, at most 5 s.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import amqp from 'amqplib';
import { freePort, type RabbitNode, startRabbitNode } from './rabbit-node.js';
import { record } from './record.js';
import { PYTHON, REPETITION, pythonWorkerArgs, sleep, stop } from './support.js';

const checks = Number(process.argv[2] ?? 500);
const seconds = Number(process.argv[3] ?? 20);
const every = Number(process.argv[4] ?? 3);
const only = process.argv[5]?.split(',');
const IDLE_S = Math.min(5, seconds);
const TICKS = 100; // USER_HZ on Linux

async function cpuSeconds(node: RabbitNode): Promise<() => number> {
  const pid = (await node.ctl('eval', 'os:getpid().')).replace(/[^0-9]/g, '');
  return () => {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(fields[11]) + Number(fields[12])) / TICKS;
  };
}

/** Rescheduled runs of bench.check so far, from the worker's /metrics. */
async function checkRuns(port: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  let n = 0;
  for (const m of text.matchAll(/^smarter_worker_tasks_total\{[^}]*task="bench\.check"[^}]*\} (\d+)/gm)) {
    n += Number(m[1]);
  }
  return n;
}

interface Result {
  type: 'quorum' | 'classic' | 'python';
  reschedules: number;
  cpu: number;
  idle: number;
}

async function variant(type: Result['type']): Promise<Result> {
  const node = await startRabbitNode();
  const queue = `bench_cpu_${process.pid}`;
  const port = await freePort();
  // Python Celery holds each countdown unacked in the worker: its broker pays one publish and one delivery.
  const worker =
    type === 'python'
      ? spawn(PYTHON, pythonWorkerArgs('benchiso', queue, 4), {
          cwd: 'bench/python',
          env: { ...process.env, CELERY_BROKER_URL: node.url },
          stdio: 'ignore',
        })
      : spawn(process.execPath, ['dist/bench/iso-worker.js', '-Q', queue, '-c', '64', '-l', 'warning'], {
          env: {
            ...process.env,
            CELERY_BROKER_URL: node.url,
            BENCH_INFRA_QUEUE: queue,
            SMARTER_WORKER_DELAY_QUEUE_TYPE: type,
            SMARTER_WORKER_HTTP_PORT: String(port),
            CELERY_RESULT_BACKEND: '',
          },
          stdio: 'ignore',
        });
  // Python's worker has no metrics endpoint: its reschedules are counted as the schedule makes them.
  const runs = type === 'python' ? () => Promise.resolve((Date.now() / 1000 / every) * checks) : () => checkRuns(port);
  try {
    for (let i = 0; ; i++) {
      const line = (await node.ctl('list_queues', '-q', 'name', 'consumers'))
        .split('\n')
        .find((l) => l.startsWith(`${queue}\t`));
      if (Number(line?.split('\t')[1] ?? 0) > 0) break;
      if (i > 120) throw new Error(`nothing consumes ${queue}`);
      await sleep(500);
    }
    const conn = await amqp.connect(node.url);
    const ch = await conn.createConfirmChannel();
    const cpu = await cpuSeconds(node);
    await sleep(2000);
    const idle0 = cpu();
    await sleep(IDLE_S * 1000);
    const idlePerSecond = (cpu() - idle0) / IDLE_S;
    for (let i = 0; i < checks; i++) {
      const id = randomUUID();
      ch.sendToQueue(queue, Buffer.from(JSON.stringify([[], { every }, {}])), {
        contentType: 'application/json',
        contentEncoding: 'utf-8',
        correlationId: id,
        headers: { lang: 'py', task: 'bench.check', id, root_id: id, retries: 0 },
      });
    }
    await ch.waitForConfirms();
    // One full round first, so the window sees the steady state (every check in the delay levels or running).
    await sleep((every + 2) * 1000);
    const [c0, r0] = [cpu(), await runs()];
    await sleep(seconds * 1000);
    const [c1, r1] = [cpu(), await runs()];
    await conn.close();
    return { type, reschedules: Math.round(r1 - r0), cpu: c1 - c0, idle: idlePerSecond * seconds };
  } finally {
    await stop(worker, 'SIGQUIT');
    await node.remove();
  }
}

const TYPES = (['quorum', 'classic', 'python'] as const).filter((t) => !only || only.includes(t));
const order = [...TYPES.slice(REPETITION % TYPES.length), ...TYPES.slice(0, REPETITION % TYPES.length)];
const results: Result[] = [];
for (const t of order) results.push(await variant(t));
results.sort((a, b) => TYPES.indexOf(a.type) - TYPES.indexOf(b.type));
const label = (t: Result['type']) =>
  t === 'python' ? 'python-celery (countdown held in the worker)' : `smarter-worker, ${t} delay levels`;

const per1000 = (r: Result) => ((r.cpu - r.idle) / r.reschedules) * 1000;
record(
  results.map((r) => ({
    bench: 'broker-cpu',
    system: label(r.type),
    metric: 'broker CPU s / 1,000 reschedules',
    unit: 's',
    value: per1000(r),
  })),
);
process.stdout.write(
  `\n${checks} checks rescheduling every ${every} s, ${seconds} s measured, one RabbitMQ node each (its idle CPU subtracted)\n\n`,
);
process.stdout.write(
  '| system | reschedules | broker CPU s | idle CPU s | CPU s / 1,000 reschedules |\n|---|---:|---:|---:|---:|\n',
);
for (const r of results) {
  process.stdout.write(
    `| ${label(r.type)} | ${r.reschedules} | ${r.cpu.toFixed(2)} | ${r.idle.toFixed(2)} | ${per1000(r).toFixed(3)} |\n`,
  );
}
