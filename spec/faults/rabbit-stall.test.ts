/**
 * A stalled link between the worker and RabbitMQ, on a node of the test's own: a proxy that stops reading both
 * ways and closes nothing for 50 s, while countdowns are parked, failing tasks retry and are dead-lettered, and
 * quick tasks run; then it forwards what waited, as a healed link does. With a 10 s heartbeat amqplib gives the
 * connections up during the stall (and RabbitMQ its side of them); with the default (120 s) the stuck-publish
 * watch renews the publishing channel, then the connections. Either way publishes whose confirm was lost may
 * already be in a queue, or arrive there when the link heals: none of them may be sent again into a second copy.
 * Once the link is back, every id is accounted for: no task run twice, no dead letter twice, none lost. A countdown
 * is the hard case: it is due during the stall, so its message comes back unacked and due while the copy parked
 * for it (in doubt) may come out of the delay levels too; one of the two runs.
 */
import type { Channel } from 'amqplib';
import amqp from '../../lib/broker/amqp/amqplib.js';
import { uniqueName } from '../support/amqp.js';
import { waitFor } from '../support/wait.js';
import { type Harness, startWorker } from '../support/harness.js';
import { type LogLine, recordingLogger } from '../support/logs.js';
import { type Accounting, type LoadMessage, account, pushbackLoad, pushbackTasks } from '../support/pushback.js';
import { type RabbitNode, startRabbitNode } from '../support/rabbit-node.js';
import { type StallProxy, startStallProxy } from '../support/stall-proxy.js';
import { closeRunCounter, runCounter } from '../support/test-tasks.js';

const STALL_MS = 50_000;
const LOAD = { work: 1000, workMs: 20, countdowns: 200, fail: 24 };
const CONCURRENCY = 16;
let node: RabbitNode;
const keys: string[] = [];

beforeAll(async () => {
  node = await startRabbitNode();
}, 120_000);

afterAll(async () => {
  await node.remove();
  for (const k of keys) await runCounter().del(`${k}:done`, `${k}:fail`, `${k}:at`);
  await closeRunCounter();
}, 60_000);

async function onNode<T>(fn: (ch: Channel) => Promise<T>): Promise<T> {
  const conn = await amqp.connect(node.url);
  try {
    return await fn(await conn.createChannel());
  } finally {
    await conn.close().catch(() => undefined);
  }
}

async function publish(queue: string, messages: ReturnType<typeof pushbackLoad>): Promise<void> {
  const conn = await amqp.connect(node.url);
  try {
    const ch = await conn.createConfirmChannel();
    for (const m of messages) ch.sendToQueue(queue, m.body, m.options);
    await ch.waitForConfirms();
  } finally {
    await conn.close().catch(() => undefined);
  }
}

/** Empties the dead-letter queue, returning the task id of each copy. */
async function drainDeadLetters(queue: string): Promise<string[]> {
  return onNode(async (ch) => {
    const ids: string[] = [];
    await ch.assertQueue(`${queue}.dead_letter`, { durable: true });
    for (;;) {
      const m = await ch.get(`${queue}.dead_letter`, { noAck: true });
      if (m === false) return ids;
      ids.push(String(m.properties.headers?.['id']));
    }
  });
}

/** The task ids waiting in the task queue (looked at, then returned to it when the channel closes). */
async function queuedIds(queue: string): Promise<Set<string>> {
  return onNode(async (ch) => {
    const ids = new Set<string>();
    for (;;) {
      const m = await ch.get(queue, { noAck: false });
      if (m === false) return ids;
      ids.add(String(m.properties.headers?.['id']));
    }
  });
}

interface StallRun extends Accounting {
  /** What ran twice, by kind of the load. */
  twiceByKind: Record<string, number>;
  said: string[];
}

/** Countdowns, failing tasks and quick tasks interleaved: whatever the worker holds when the link stalls publishes. */
function interleaved(load: LoadMessage[]): LoadMessage[] {
  const kinds = ['countdown', 'fail', 'work'].map((k) => load.filter((m) => m.kind === k));
  const out: LoadMessage[] = [];
  for (let i = 0; out.length < load.length; i++) {
    for (const k of kinds) {
      const m = k[i];
      if (m) out.push(m);
    }
  }
  return out;
}

async function throughStall(heartbeat: string | undefined): Promise<StallRun> {
  const proxy: StallProxy = await startStallProxy({ host: '127.0.0.1', port: node.port });
  const lines: LogLine[] = [];
  // When each line was said, beside it.
  const times: number[] = [];
  const push = lines.push.bind(lines);
  lines.push = (...items: LogLine[]) => {
    for (const _ of items) times.push(Date.now());
    return push(...items);
  };
  let h: Harness | undefined;
  try {
    h = await startWorker({
      tasks: (q) => pushbackTasks(q),
      logger: recordingLogger(lines),
      env: {
        CELERY_BROKER_URL: `amqp://guest:guest@127.0.0.1:${proxy.port}/`,
        CELERY_WORKER_CONCURRENCY: String(CONCURRENCY),
        SMARTER_WORKER_ETA_HOLD_MAX: '1',
        ...(heartbeat !== undefined ? { CELERY_BROKER_HEARTBEAT: heartbeat } : {}),
      },
    });
    const queue = h.queue;
    const key = uniqueName('stall');
    keys.push(key);
    const load = interleaved(pushbackLoad(key, LOAD));
    await publish(queue, load);
    // The link stalls while the worker works through the load: parking countdowns, publishing retries.
    await waitFor(async () => (await runCounter().hlen(`${key}:done`)) >= 50, 60_000, 10);
    const stalledAt = Date.now();
    await proxy.stall(STALL_MS);
    const deadLetters: string[] = [];
    let result: Accounting | undefined;
    // Every id finishes: done, or each attempt once and its dead-letter copy.
    await waitFor(
      async () => {
        deadLetters.push(...(await drainDeadLetters(queue)));
        result = await account(key, load, deadLetters);
        return result.lost.length === 0;
      },
      45_000,
      500,
    ).catch(() => undefined);
    // Anything sent twice, or a copy left in the stalled link, has arrived by now.
    await new Promise((r) => setTimeout(r, 3000));
    deadLetters.push(...(await drainDeadLetters(queue)));
    const final = await account(key, load, deadLetters, await queuedIds(queue));
    const said = lines
      .map((l, i) => ({ l, at: times[i] ?? 0 }))
      .filter(({ l }) => /stuck|unconfirmed|connection lost|restored|discarded|dead-letter|lost/.test(l.message))
      .map(({ l, at }) => `+${((at - stalledAt) / 1000).toFixed(1)} s ${l.message}`);
    const kindOf = new Map(load.map((m) => [m.id, m.kind]));
    const twiceByKind: Record<string, number> = {};
    for (const id of final.ranTwice) {
      const kind = kindOf.get(id.split(':')[0] ?? '') ?? 'unknown';
      twiceByKind[kind] = (twiceByKind[kind] ?? 0) + 1;
    }
    const shown = [...new Set(said)];
    // Deliveries acked unrun, by why (copies.ts).
    const discards: Record<string, number> = {};
    for (const l of lines) {
      if (!l.message.startsWith('discarded task')) continue;
      const why = String(l.meta['reason']);
      discards[why] = (discards[why] ?? 0) + 1;
    }
    return {
      ...final,
      twiceByKind,
      said: [
        ...shown.filter((l) => !l.includes('discarded')),
        `${shown.length} lines said, discards included; discarded ${JSON.stringify(discards)}`,
      ],
    };
  } finally {
    await h?.app.shutdown().catch(() => undefined);
    await proxy.close();
  }
}

function report(what: string, r: StallRun): void {
  process.stdout.write(
    `${what}: sent ${r.sent}, done ${r.done}, ran twice ${r.ranTwice.length} ${JSON.stringify(r.twiceByKind)}, dead-lettered twice ${r.duplicatedDeadLetters.length}, lost ${r.lost.length}\n  ${r.said.join('\n  ')}\n`,
  );
}

function expectAccounted(r: StallRun): void {
  expect(r.twiceByKind).toEqual({});
  expect(r.duplicatedDeadLetters).toEqual([]);
  expect(r.lost).toEqual([]);
}

test('own wiring: a link stalled 50 s with a 10 s heartbeat: nothing run twice, dead-lettered twice or lost', async () => {
  const r = await throughStall('10');
  report('stall, heartbeat 10 s', r);
  expectAccounted(r);
}, 150_000);

test('own wiring: a link stalled 50 s with the default heartbeat: nothing run twice, dead-lettered twice or lost', async () => {
  const r = await throughStall(undefined);
  report('stall, default heartbeat', r);
  expectAccounted(r);
}, 150_000);
