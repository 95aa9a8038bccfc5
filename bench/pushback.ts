/**
 * Push-back: N quick tasks (every 50th with a countdown) waiting on a RabbitMQ node of its own; once a third
 * is done the node raises a memory alarm (it blocks every connection that publishes) for `alarm` seconds,
 * then clears it. Tasks finished during the alarm, and their rate, for our worker (Smarter's defaults: early
 * ack; it parks the countdowns in the broker, a publish, and holds them acked while the alarm lasts) and
 * Python Celery 5.2.6 prefork -c 2 (it holds them).
 * Then the same quick tasks without countdowns on a redis-server of its own, early ack: the drain rate.
 * Each task stamps its finish in a Redis of the benchmark's own.
 *
 *   npm run build && node dist/bench/pushback.js [tasks=30000] [alarm-seconds=20]
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { startRabbitNode } from './rabbit-node.js';
import { record, type Sample } from './record.js';
import { startRedisServer } from './redis-server.js';
import { rotated } from './stats.js';
import { PYTHON, REPETITION, pythonWorkerArgs, sleep, stop } from './support.js';

const exec = promisify(execFile);
const count = Number(process.argv[2] ?? 30_000);
const alarmS = Number(process.argv[3] ?? 20);
/** Long enough that a countdown is still in the future when a worker takes it, whatever the alarm's length. */
const countdownS = Math.max(6, 2 * alarmS);
const PYTHON_C = 2;
const QUEUE = 'bench_pushback';

const counterServer = await startRedisServer();
const counter = new Redis(counterServer.url);
const done = (key: string) => counter.llen(`${key}:at`);
const stamps = async (key: string) => (await counter.lrange(`${key}:at`, 0, -1)).map(Number);

type Start = (env: NodeJS.ProcessEnv) => ChildProcess;
const systems: [string, Start][] = [
  [
    'smarter-worker',
    (env) =>
      spawn(process.execPath, ['dist/bench/pushback-worker.js', '-Q', QUEUE, '-l', 'warning', '--without-mingle'], {
        env,
        stdio: ['ignore', 'ignore', 'inherit'],
      }),
  ],
  [
    `python-celery -c ${PYTHON_C}`,
    (env) =>
      spawn(PYTHON, pythonWorkerArgs('benchpush', QUEUE, PYTHON_C, ['--without-heartbeat']), {
        cwd: 'bench/python',
        env,
        stdio: ['ignore', 'ignore', 'ignore'],
      }),
  ],
];

/** The load, sent by Python Celery with no worker running (so none is taken before all are sent). */
async function publish(env: NodeJS.ProcessEnv, key: string, n: number, countdown: number): Promise<void> {
  await exec(PYTHON, ['bench/python/benchpush.py', 'publish', QUEUE, String(n), key, String(countdown)], {
    env,
    timeout: 600_000,
  });
}

/** Waits until `key` has `n` tasks done or `timeoutMs` has passed, saying how many every 10 s; returns how many. */
async function waitDone(key: string, n: number, timeoutMs: number): Promise<number> {
  let told = Date.now();
  for (const until = Date.now() + timeoutMs; ; await sleep(50)) {
    const got = await done(key);
    if (got >= n || Date.now() > until) return got;
    if (Date.now() - told > 10_000) {
      process.stderr.write(`  ${got} of ${n} done\n`);
      told = Date.now();
    }
  }
}

const samples: Sample[] = [];
const sample = (bench: string, system: string, metric: string, unit: string, value: number) => {
  samples.push({ bench, system, metric, unit, value });
  process.stderr.write(`  ${metric}: ${Number.isInteger(value) ? value : value.toFixed(1)} ${unit}\n`);
};
let worker: ChildProcess | undefined;
try {
  const node = await startRabbitNode();
  try {
    for (const [system, start] of rotated(systems, REPETITION)) {
      const key = `pushback:${system.replace(/\W+/g, '_')}:${process.pid}`;
      const env = { ...process.env, CELERY_BROKER_URL: node.url, BENCH_COUNTER_URL: counterServer.url };
      process.stderr.write(`RabbitMQ, ${system}: ${count} tasks, ${alarmS} s memory alarm\n`);
      await publish(env, key, count, countdownS);
      worker = start(env);
      const third = Math.ceil(count / 3);
      if ((await waitDone(key, third, 600_000)) < third) throw new Error(`${system}: a third not done in 10 min`);
      await node.ctl('set_vm_memory_high_watermark', '0.000001');
      const alarmAt = Date.now();
      // rabbitmqctl takes a second or two: what was left once the alarm was up is what it could slow.
      sample('pushback', system, 'not done when the alarm rose', 'tasks', count - (await done(key)));
      try {
        await sleep(alarmS * 1000);
      } finally {
        await node.ctl('set_vm_memory_high_watermark', '0.4');
      }
      const during = (await stamps(key)).filter((t) => t > alarmAt && t <= alarmAt + alarmS * 1000);
      sample('pushback', system, 'done during the alarm', 'tasks', during.length);
      // Over the part of the alarm that had work: a worker that ran out of tasks is not slowed by it.
      sample(
        'pushback',
        system,
        'rate during the alarm',
        '1/s',
        (during.length / (Math.max(...during, alarmAt + 1) - alarmAt)) * 1000,
      );
      // A task still missing a minute after the last countdown was due is counted, not waited for.
      const finished = await waitDone(key, count, 60_000 + (countdownS + alarmS) * 1000);
      sample('pushback', system, 'never done', 'tasks', count - finished);
      const all = await stamps(key);
      sample('pushback', system, 'all done, first → last', 's', (Math.max(...all) - Math.min(...all)) / 1000);
      await stop(worker);
      worker = undefined;
      await node.ctl('delete_queue', QUEUE).catch(() => undefined);
      await counter.del(`${key}:at`);
    }
  } finally {
    if (worker) await stop(worker);
    worker = undefined;
    await node.remove();
  }

  const broker = await startRedisServer();
  try {
    for (const [system, start] of rotated(systems, REPETITION)) {
      const key = `redis:${system.replace(/\W+/g, '_')}:${process.pid}`;
      const env = { ...process.env, CELERY_BROKER_URL: broker.url, BENCH_COUNTER_URL: counterServer.url };
      process.stderr.write(`Redis, ${system}: ${count} quick tasks, early ack\n`);
      await publish(env, key, count, 0);
      worker = start(env);
      const finished = await waitDone(key, count, 600_000);
      if (finished < count) throw new Error(`Redis, ${system}: ${count - finished} of ${count} not done in 10 min`);
      const all = await stamps(key);
      sample(
        'pushback',
        system,
        'Redis early ack, tasks/s',
        '1/s',
        count / ((Math.max(...all) - Math.min(...all)) / 1000),
      );
      await stop(worker);
      worker = undefined;
      await counter.del(`${key}:at`);
    }
  } finally {
    if (worker) await stop(worker);
    await broker.stop();
  }
} finally {
  await counter.quit();
  await counterServer.stop();
}
record(samples);
process.stdout.write(
  `\n${count} quick tasks (every 50th with a ${countdownS} s countdown), a ${alarmS} s memory alarm once a third is done\n\n| system | metric | value |\n|---|---|---:|\n`,
);
for (const s of samples) process.stdout.write(`| ${s.system} | ${s.metric} (${s.unit}) | ${s.value.toFixed(1)} |\n`);
