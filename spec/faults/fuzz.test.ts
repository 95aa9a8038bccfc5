/**
 * 100,000 fast-check messages (broken JSON, wrong types in every header and body field, huge bodies and zlib
 * bombs, deep nesting, bad UTF-8, v1/v2 hybrids, wrong content types and encodings, missing properties) with
 * good ones in between, published to one queue of the real RabbitMQ that a worker process consumes. The
 * worker never exits and never stops making progress, every good one runs exactly once, every bad one is in
 * the dead-letter queue once with a reason naming what was wrong, and its memory stays flat.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import amqp from '../../lib/broker/amqp/amqplib.js';
import { AMQP_URL, deleteQueues, uniqueName, withChannel } from '../support/amqp.js';
import { waitFor } from '../support/wait.js';
import { FUZZ_MAX_BODY, type FuzzCase, sampleCases } from '../support/fuzz-messages.js';
import { closeRunCounter, runCounter } from '../support/test-tasks.js';

const N = Number(process.env.FUZZ_MESSAGES ?? 100_000);
const SEED = Number(process.env.FUZZ_SEED ?? 20261201);
const BATCH = 2_000;
const redis = runCounter();
let child: ChildProcess | undefined;
const queue = uniqueName('fuzz');
const key = uniqueName('fuzzrun');

afterAll(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((r) => child?.once('exit', r));
    child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([exited, new Promise((r) => (timer = setTimeout(r, 10_000)))]);
    clearTimeout(timer);
    if (child.exitCode === null) child.kill('SIGKILL');
  }
  await deleteQueues([queue, `${queue}.dead_letter`]);
  await redis.del(`${key}:runs`, `${key}:by`, `${key}:late`);
  await closeRunCounter();
});

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

async function heapMb(port: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const m = /^smarter_worker_nodejs_heap_size_used_bytes (\S+)$/m.exec(text);
  return m ? Number(m[1]) / 2 ** 20 : NaN;
}

async function queueDepth(name: string): Promise<number> {
  return withChannel(async (ch) => (await ch.checkQueue(name)).messageCount).catch(() => 0);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

test(`own wiring: ${N.toLocaleString('en')} fuzzed messages with good ones in between: every good one runs once, every bad one is dead-lettered naming its fault, the worker never crashes or stalls, memory stays flat`, async () => {
  const port = await freePort();
  const started = Date.now();
  let out = '';
  let fatal = '';
  child = spawn(process.execPath, ['--import', 'tsx', 'spec/support/worker-main.ts', '-Q', queue, '-c', '16'], {
    env: {
      ...process.env,
      CELERY_BROKER_URL: AMQP_URL,
      CELERY_RESULT_BACKEND: '',
      CELERY_WORKER_HOSTNAME: `${queue}@%h`,
      SMARTER_WORKER_MAX_BODY_SIZE: String(FUZZ_MAX_BODY),
      SMARTER_WORKER_HTTP_PORT: String(port),
      SMARTER_WORKER_HTTP_HOST: '127.0.0.1',
      CELERY_WORKER_LOGLEVEL: 'WARNING',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let refusedLines = 0;
  // Per stream, the part of a line that the last chunk cut off.
  const partial = { stdout: '', stderr: '' };
  const scan = (stream: 'stdout' | 'stderr') => (chunk: Buffer) => {
    out = (out + chunk.toString()).slice(-200_000);
    const lines = (partial[stream] + chunk.toString()).split('\n');
    partial[stream] = lines.pop() ?? '';
    for (const line of lines) {
      if (line.includes('"fatal":true') || line.includes('unexpected error')) fatal ||= line;
      if (line.includes('refused a message on') || line.includes('received unregistered task')) refusedLines++;
    }
  };
  child.stdout?.on('data', scan('stdout'));
  child.stderr?.on('data', scan('stderr'));
  const pid = child.pid ?? 0;
  await waitFor(
    async () => (await withChannel(async (ch) => (await ch.checkQueue(queue)).consumerCount).catch(() => 0)) > 0,
    60_000,
    100,
  );

  // Publish in batches, keeping only what each id must become.
  const expected = new Map<string, FuzzCase>();
  const conn = await amqp.connect(AMQP_URL);
  const ch = await conn.createConfirmChannel();
  const samples: Array<{ at: number; done: number; rss: number; heap: number }> = [];
  const progress = async () => (await redis.hlen(`${key}:runs`)) + (await queueDepth(`${queue}.dead_letter`));
  for (let first = 0; first < N; first += BATCH) {
    const cases = sampleCases(Math.min(BATCH, N - first), SEED + first);
    for (const [i, c] of cases.entries()) {
      const id = `fz-${first + i}-${queue}`;
      expected.set(id, c);
      const m = c.build(id, key);
      ch.sendToQueue(queue, m.body, m.options);
    }
    await ch.waitForConfirms();
    // Back-pressure: stay at most a few batches ahead of the worker, so the broker holds a bounded backlog.
    while ((await queueDepth(queue)) > 4 * BATCH) await new Promise((r) => setTimeout(r, 100));
    samples.push({ at: Date.now() - started, done: await progress(), rss: rssMb(pid), heap: await heapMb(port) });
  }
  await conn.close();

  const goods = [...expected].filter(([, c]) => c.expect === 'ok').map(([id]) => id);
  const bads = new Map([...expected].filter(([, c]) => c.expect !== 'ok'));
  // Never stalled: the count of settled messages rises in every 20 s window until all are settled.
  let last = -1;
  let lastChange = Date.now();
  for (;;) {
    const done = await progress();
    if (done !== last) {
      last = done;
      lastChange = Date.now();
    }
    if (done >= N) break;
    if (child.exitCode !== null) {
      throw new Error(`the worker exited (${child.exitCode}) at ${done} of ${N}: ${out.slice(-2000)}`);
    }
    if (Date.now() - lastChange > 20_000) throw new Error(`the worker stalled at ${done} of ${N} for 20 s`);
    samples.push({ at: Date.now() - started, done, rss: rssMb(pid), heap: await heapMb(port) });
    await new Promise((r) => setTimeout(r, 1000));
  }
  samples.push({ at: Date.now() - started, done: await progress(), rss: rssMb(pid), heap: await heapMb(port) });
  expect(child.exitCode).toBeNull();
  expect(fatal).toBe('');

  // Every good one ran exactly once (early ack: no redelivery without a crash).
  const runs = await redis.hgetall(`${key}:runs`);
  const missing = goods.filter((id) => runs[id] === undefined);
  const twice = goods.filter((id) => runs[id] !== undefined && runs[id] !== '1');
  expect({ missing: missing.slice(0, 5), twice: twice.slice(0, 5) }).toEqual({ missing: [], twice: [] });
  expect(Object.keys(runs)).toHaveLength(goods.length);

  // Every bad one is in the dead-letter queue once, with a reason that names its fault.
  const seen = new Map<string, number>();
  const wrong: string[] = [];
  const strangers: string[] = [];
  await withChannel(async (dch) => {
    await dch.prefetch(2000);
    let got = 0;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`read ${got} dead letters of ${bads.size}`)), 120_000);
      void dch.consume(
        `${queue}.dead_letter`,
        (m) => {
          if (!m) return;
          got++;
          const id = String(m.properties.correlationId);
          const reason = String(m.properties.headers?.['x-dead-letter-reason'] ?? '');
          const c = bads.get(id);
          if (!c) strangers.push(id);
          else if (!reason.includes(c.expect)) wrong.push(`${c.kind}: expected ${c.expect} in «${reason}»`);
          seen.set(id, (seen.get(id) ?? 0) + 1);
          if (got >= bads.size) {
            clearTimeout(timer);
            resolve();
          }
        },
        { noAck: true },
      );
    });
  });
  const unseen = [...bads.keys()].filter((id) => !seen.has(id));
  const copiedTwice = [...seen].filter(([, n]) => n > 1).map(([id]) => id);
  expect({
    wrong: wrong.slice(0, 10),
    strangers: strangers.slice(0, 5),
    unseen: unseen.slice(0, 5),
    copiedTwice: copiedTwice.slice(0, 5),
  }).toEqual({
    wrong: [],
    strangers: [],
    unseen: [],
    copiedTwice: [],
  });
  expect(refusedLines).toBe(bads.size);

  // Flat memory: the last samples are no higher than the run's first quarter (once warm) allows. The heap is
  // compared by its floor (the lowest sample of each part): the used heap between two collections holds garbage,
  // and a leak shows as a floor that rises.
  const warm = samples.filter((s) => s.done >= N * 0.1 && s.done <= N * 0.35);
  const end = samples.slice(-3);
  const late = samples.filter((s) => s.done >= N * 0.65);
  const summary = {
    messages: N,
    good: goods.length,
    bad: bads.size,
    seconds: Math.round((Date.now() - started) / 1000),
    rssWarmMb: Math.round(median(warm.map((s) => s.rss))),
    rssEndMb: Math.round(median(end.map((s) => s.rss))),
    rssMaxMb: Math.round(Math.max(...samples.map((s) => s.rss))),
    heapWarmMb: Math.round(Math.min(...warm.map((s) => s.heap))),
    heapEndMb: Math.round(Math.min(...late.map((s) => s.heap))),
    heapMaxMb: Math.round(Math.max(...samples.map((s) => s.heap))),
    samples: samples.length,
  };
  console.log(`fuzz: ${JSON.stringify(summary)}`);
  expect(warm.length).toBeGreaterThan(0);
  expect(summary.heapEndMb).toBeLessThan(summary.heapWarmMb * 1.5 + 32);
  expect(summary.rssEndMb).toBeLessThan(summary.rssWarmMb * 1.5 + 64);
}, 300_000);
