/**
 * ADR-030's "never wait", on the real broker: countdowns and far ETAs wait in RabbitMQ's delay topology,
 * not in a worker; checks reschedule themselves through it; a crash loses none of them.
 */
import { type ChildProcess, execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { AMQP_URL, REDIS_URL, deleteQueues, publishMany, uniqueName, withChannel } from '../support/amqp.js';
import { waitFor } from '../support/wait.js';
import { startWorker } from '../support/harness.js';
import { ResultReader } from '../support/results.js';
import { closeRunCounter } from '../support/test-tasks.js';
import { PYTHON } from '../support/python-worker.js';
import { spawnTestWorker } from '../support/spawn-worker.js';
import { type RabbitNode, startRabbitNode } from '../support/rabbit-node.js';

const exec = promisify(execFile);
const redis = new Redis(REDIS_URL);
const results = new ResultReader();

afterAll(async () => {
  await results.close();
  await redis.quit();
  await closeRunCounter();
});

async function unacked(queue: string): Promise<number> {
  const { stdout } = await exec('rabbitmqctl', ['list_queues', '-q', 'name', 'messages_unacknowledged']);
  const line = stdout.split('\n').find((l) => l.split('\t')[0] === queue);
  return Number(line?.split('\t')[1] ?? 0);
}

/** Ready plus unacknowledged, as the broker counts them. */
async function queued(queue: string): Promise<number> {
  const { stdout } = await exec('rabbitmqctl', ['list_queues', '-q', 'name', 'messages']);
  const line = stdout.split('\n').find((l) => l.split('\t')[0] === queue);
  return Number(line?.split('\t')[1] ?? 0);
}

async function ready(queue: string): Promise<number> {
  return withChannel(async (ch) => (await ch.checkQueue(queue)).messageCount);
}

/** Python Celery's `send_task` with a countdown (to the shared broker unless `broker` names another); prints the id. */
async function pythonSend(
  queue: string,
  task: string,
  args: unknown[],
  countdown: number,
  broker = AMQP_URL,
): Promise<string> {
  const code = `
import json, sys
from celery import Celery
app = Celery(broker=sys.argv[1], backend=sys.argv[2])
print(app.send_task(sys.argv[3], args=json.loads(sys.argv[4]), queue=sys.argv[5], countdown=float(sys.argv[6])).id)`;
  const { stdout } = await exec(PYTHON, [
    '-c',
    code,
    broker,
    REDIS_URL,
    task,
    JSON.stringify(args),
    queue,
    String(countdown),
  ]);
  return stdout.trim();
}

function pollMessages(key: string, n: number, every: number) {
  return Array.from({ length: n }, () => {
    const id = randomUUID();
    return {
      body: JSON.stringify([[], { key, every }, {}]),
      options: {
        contentType: 'application/json',
        correlationId: id,
        headers: { lang: 'py', task: 'test.poll', id, root_id: id, retries: 0 },
      },
    };
  });
}

test('own wiring: a Python countdown of an hour is acked within seconds and waits in the delay topology, not in the worker', async () => {
  const h = await startWorker({ env: { CELERY_RESULT_BACKEND: REDIS_URL } });
  try {
    const before = await withChannel(async (ch) => (await ch.checkQueue('celery_delayed_11')).messageCount);
    await pythonSend(h.queue, 'test.add', [1, 2], 3600);
    await waitFor(() => h.worker.offloaded === 1, 30_000);
    expect(await ready(h.queue)).toBe(0);
    expect(await unacked(h.queue)).toBe(0);
    expect(h.worker.heldCount).toBe(0);
    // 3600 s = 2048 + 1024 + 512 + 16: it first waits in level 11.
    await waitFor(
      async () =>
        (await withChannel(async (ch) => (await ch.checkQueue('celery_delayed_11')).messageCount)) === before + 1,
      10_000,
    );
  } finally {
    await h.stop();
  }
});

test('own wiring: countdown=3 (held) runs 3 to 4 s later; countdown=8 (parked in the broker) runs 8 to 9 s later', async () => {
  const h = await startWorker({ env: { CELERY_RESULT_BACKEND: REDIS_URL } });
  try {
    const t0 = Date.now();
    const [near, far] = await Promise.all([
      pythonSend(h.queue, 'test.add', [1, 1], 3),
      pythonSend(h.queue, 'test.add', [2, 2], 8),
    ]);
    const nearDone = await results.ready(near, 10_000);
    const tNear = Date.parse(String(nearDone.date_done));
    const farDone = await results.ready(far, 15_000);
    const tFar = Date.parse(String(farDone.date_done));
    expect(tNear - t0).toBeGreaterThanOrEqual(3000);
    expect(tNear - t0).toBeLessThan(4000 + 500); // + the Python interpreter's start-up before send_task
    expect(tFar - t0).toBeGreaterThanOrEqual(8000);
    expect(tFar - t0).toBeLessThan(9000 + 500);
    expect(h.worker.offloaded).toBe(1);
  } finally {
    await h.stop();
  }
});

test('own wiring: 1,000 checks rescheduling every 6 s: while they wait the worker holds nothing; each ends after exactly 5 attempts', async () => {
  const key = uniqueName('poll');
  // Quorum delay queues confirm in ~10 ms under load (Raft log): enough runs in flight keep a round short.
  const h = await startWorker({ env: { CELERY_WORKER_CONCURRENCY: '64' } });
  try {
    // 6 s, not less: rabbitmqctl takes one to two seconds to start on a busy 2-core machine, and its sample only
    // counts when it is taken inside the wait; and a round of 1,000 runs must be over well inside it when the
    // machine is loaded (4 s failed twice beside a full lint run).
    await publishMany(h.queue, pollMessages(key, 1000, 6));
    let idleRounds = 0;
    const brokerSamples: number[] = [];
    const idle = () => h.worker.active.size === 0 && h.worker.heldCount === 0 && h.worker.reservedCount === 0;
    for (let round = 1; round <= 4; round++) {
      await waitFor(async () => Number(await redis.get(`${key}:runs`)) === 1000 * round, 30_000, 20);
      // Between rounds (the 6 s wait) every check is parked in the broker: the last runs of a round settle
      // within moments, then the worker holds nothing.
      await waitFor(idle, 3000, 10);
      idleRounds++;
      // The broker's own count, from rabbitmqctl (slow to start): a sample counts only if the worker was idle
      // before and after it and no run began meanwhile, i.e. it was taken inside the wait.
      const before = await redis.get(`${key}:runs`);
      const count = await unacked(h.queue);
      if (idle() && (await redis.get(`${key}:runs`)) === before) brokerSamples.push(count);
    }
    expect(idleRounds).toBe(4);
    expect(brokerSamples.length).toBeGreaterThanOrEqual(1);
    expect(brokerSamples.every((n) => n === 0)).toBe(true);
    await waitFor(async () => Number(await redis.get(`${key}:gave-up`)) === 1000, 30_000);
    expect(Number(await redis.get(`${key}:runs`))).toBe(5000);
    // Every run has its own message id; the first run's id is carried as data.
    expect(await redis.hlen(key)).toBe(5000);
  } finally {
    await h.stop();
    await redis.del(key, `${key}:runs`, `${key}:gave-up`);
  }
}, 120_000);

test('own wiring: SIGKILL while 100 checks wait in the broker: after a restart every one of them runs, once', async () => {
  const queue = uniqueName('kill');
  const key = uniqueName('killpoll');
  const spawnWorker = (): ChildProcess =>
    spawnTestWorker({
      queue,
      concurrency: 8,
      env: { CELERY_BROKER_URL: AMQP_URL },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
  const first = spawnWorker();
  // "not ready; check 2 in 3s" is logged once the reschedule is confirmed by the broker.
  let rescheduled = 0;
  first.stdout?.on('data', (chunk: Buffer) => {
    rescheduled += chunk.toString().split('not ready; check').length - 1;
  });
  let second: ChildProcess | undefined;
  try {
    await waitFor(
      async () => (await withChannel(async (ch) => (await ch.checkQueue(queue)).consumerCount).catch(() => 0)) > 0,
      30_000,
      100,
    );
    await publishMany(queue, pollMessages(key, 100, 3));
    // The checks ack early (Celery's default): a run killed between its ack and its reschedule's confirm loses
    // its chain, as in Celery. So the kill comes once every first run has rescheduled (and none has run again).
    await waitFor(() => rescheduled === 100, 20_000);
    expect(Number(await redis.get(`${key}:runs`))).toBe(100);
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));
    second = spawnWorker();
    second.stdout?.resume();
    // Five attempts each, whichever worker ran them: none lost, none run twice.
    await waitFor(async () => Number(await redis.get(`${key}:gave-up`)) >= 100, 60_000).catch(async (e: unknown) => {
      const counts = {
        runs: await redis.get(`${key}:runs`),
        gaveUp: await redis.get(`${key}:gave-up`),
        queued: await queued(queue),
      };
      throw new Error(`${String(e)}: ${JSON.stringify(counts)}`);
    });
    await new Promise((r) => setTimeout(r, 1000));
    expect(Number(await redis.get(`${key}:runs`))).toBe(500);
    expect(await redis.hlen(key)).toBe(500);
  } finally {
    first.kill('SIGKILL');
    second?.kill('SIGTERM');
    if (second) await new Promise((r) => second?.once('exit', r));
    await deleteQueues([queue]);
    await redis.del(key, `${key}:runs`, `${key}:gave-up`);
  }
}, 90_000);

test('own wiring: delayed messages whose queue was deleted are dropped and do not stall the others behind them', async () => {
  const gone = uniqueName('gone');
  const h1 = await startWorker({ queue: gone });
  for (let i = 0; i < 100; i++) await h1.worker.publisher.apply('test.add', [1, 1], {}, { countdown: 2, queue: gone });
  await h1.stop();
  const h = await startWorker({ env: { CELERY_RESULT_BACKEND: REDIS_URL } });
  try {
    await new Promise((r) => setTimeout(r, 1000));
    const id = await h.worker.publisher.apply('test.add', [2, 3], {}, { countdown: 2 });
    expect((await results.ready(id)).result).toBe(5);
    // Every worker on the broker parks its countdowns there, other tests' too: an empty moment may take a while.
    await waitFor(
      async () => (await withChannel(async (ch) => (await ch.checkQueue('celery_delayed_1')).messageCount)) === 0,
      30_000,
      200,
    );
  } finally {
    await h.stop();
  }
});

// RabbitMQ checks consumer timeouts on each channel's tick, once a minute by default: the broker's tick set to 1 s
// lets a 20 s countdown outlast four timeouts and twenty ticks (the 2-minute countdown this replaced spanned two
// ticks), and lets the contrast close its channel in seconds rather than at the next minute. On a node of the
// test's own: these settings are the node's, and on the shared broker they closed the channel of any other test
// that held a message unacked for 5 s meanwhile (a dead-letter replay of 10,000, for one).
describe('own wiring, own RabbitMQ node: consumer_timeout set to 5 s, the channel tick to 1 s', () => {
  let node: RabbitNode;
  const setRabbitEnv = (key: string, value: number) =>
    node.ctl('eval', `application:set_env(rabbit, ${key}, ${value}).`);

  /** Our worker's 20 s countdown: its result, and how often the broker closed the channel meanwhile. */
  async function countdownOverTimeouts(): Promise<{ done: Record<string, unknown>; disconnects: number }> {
    const h = await startWorker({ env: { CELERY_BROKER_URL: node.url, CELERY_RESULT_BACKEND: REDIS_URL } });
    let disconnects = 0;
    h.broker.on('disconnected', () => disconnects++);
    try {
      const id = await pythonSend(h.queue, 'test.add', [10, 10], 20, node.url);
      const done = await results.ready(id, 40_000);
      return { done, disconnects };
    } finally {
      await h.stop();
    }
  }

  /** A countdown held unacked in the worker, as Celery holds it: how often the broker closed the channel. */
  async function heldAsCelery(): Promise<number> {
    const h = await startWorker({
      env: { CELERY_BROKER_URL: node.url, CELERY_RESULT_BACKEND: REDIS_URL, SMARTER_WORKER_DELAYED_DELIVERY: 'false' },
    });
    let disconnects = 0;
    h.broker.on('disconnected', () => disconnects++);
    try {
      // Closed at the first tick after the 5 s timeout; the countdown is far longer than the wait.
      await pythonSend(h.queue, 'test.add', [1, 1], 100, node.url);
      await waitFor(() => disconnects > 0, 30_000, 200);
      return disconnects;
    } finally {
      await h.stop();
    }
  }

  // Both run side by side from here (the channels read the settings when they open), and each test awaits its own.
  let countdown: Promise<Awaited<ReturnType<typeof countdownOverTimeouts>>>;
  let held: Promise<number>;
  beforeAll(async () => {
    node = await startRabbitNode();
    await setRabbitEnv('consumer_timeout', 5000);
    await setRabbitEnv('channel_tick_interval', 1000);
    countdown = countdownOverTimeouts();
    held = heldAsCelery();
    // Awaited by the tests; a rejection meanwhile is theirs to report, not an unhandled one.
    countdown.catch(() => undefined);
    held.catch(() => undefined);
  }, 120_000);
  afterAll(async () => {
    await Promise.allSettled([countdown, held]);
    await node?.remove();
  }, 60_000);

  test('a 20 s countdown (four consumer timeouts) completes and the broker never closes our channel', async () => {
    const { done, disconnects } = await countdown;
    expect(done).toMatchObject({ status: 'SUCCESS', result: 20 });
    expect(disconnects).toBe(0);
  }, 60_000);

  test('for contrast, holding the message unacked as Celery does gets the channel closed by the broker', async () => {
    expect(await held).toBeGreaterThan(0);
  }, 60_000);
});

test('own wiring: a run still going after its wait budget is reported by name; a quick one is not', async () => {
  const h = await startWorker({ env: { CELERY_RESULT_BACKEND: REDIS_URL, SMARTER_WORKER_WAIT_BUDGET: '0.5' } });
  try {
    const slow = await h.worker.publisher.apply('test.sleep', [1.2], {});
    const quick = await h.worker.publisher.apply('test.add', [1, 1], {});
    await results.ready(quick);
    await results.ready(slow);
    expect(Object.fromEntries(h.worker.overWaitBudget)).toEqual({ 'test.sleep': 1 });
  } finally {
    await h.stop();
  }
});
