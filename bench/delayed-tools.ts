/**
 * The delay tools at scale, on a RabbitMQ node of their own: N countdowns of one hour parked (raw publishes
 * into the delay levels, confirmed in windows), the node's memory with them, then `release --queue`,
 * `purge --queue` and `purge` (every queue) timed, each on N freshly parked.
 *
 *   node --import tsx bench/delayed-tools.ts [--count 100000] [--queue-type quorum|classic] [--only memory]
 *
 * Minutes, not in CI. Prints one JSON line per step.
 */
import { parseArgs } from 'node:util';
import fs from 'node:fs';
import os from 'node:os';
import { AmqpBroker } from '../lib/broker/amqp/amqp-broker.js';
import { parkCountdowns } from './park-countdowns.js';
import type { DelayQueueType } from '../lib/broker/broker.js';
import { nullLogger } from '../lib/logger.js';
import { rabbitMemoryMb } from './rabbit-memory.js';
import { startRabbitNode } from './rabbit-node.js';

const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '100000' },
    'queue-type': { type: 'string', default: 'quorum' },
    only: { type: 'string' },
  },
});
const count = Number(values.count);
const queueType = values['queue-type'] as DelayQueueType;
const QUEUE = 'bench_delayed_tools';
const OTHER = 'bench_delayed_other';

const line = (o: Record<string, unknown>) =>
  console.log(JSON.stringify({ ...o, load1: Number(os.loadavg()[0]?.toFixed(1)), at: new Date().toISOString() }));

async function park(url: string, n: number, queue: string): Promise<number> {
  const started = Date.now();
  await parkCountdowns(url, queue, n);
  return (Date.now() - started) / 1000;
}

async function main(): Promise<void> {
  const node = await startRabbitNode();
  const logger = nullLogger();
  const broker = new AmqpBroker({ url: node.url, logger });
  try {
    await broker.connect();
    await broker.declareDelayed({ queueType });
    for (const q of [QUEUE, OTHER]) await broker.declareQueue({ name: q });
    const totalMb = async () => {
      const m = await rabbitMemoryMb(node.node);
      // The total, and every part over 5 MB (the quorum queues' WAL is in quorum_ets).
      return Object.fromEntries(
        Object.entries(m)
          .filter(([k, v]) => k === 'total' || v > 5)
          .map(([k, v]) => [`${k}_mb`, Math.round(v)]),
      );
    };
    line({ step: 'empty', queueType, ...(await totalMb()) });
    const seconds = await park(node.url, count, QUEUE);
    line({ step: 'parked', queueType, count, seconds, rate: Math.round(count / seconds), ...(await totalMb()) });
    if (values.only === 'memory') {
      await broker.purgeDelayed();
      await new Promise((r) => setTimeout(r, 5000));
      line({ step: 'purged', queueType, ...(await totalMb()) });
      return;
    }
    const pid = (await node.ctl('eval', 'os:getpid().')).replace(/[^0-9]/g, '');
    const brokerCpu = () => {
      const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
      return (Number(fields[11]) + Number(fields[12])) / 100;
    };
    // On a shared machine the wall clock says how busy it was; CPU seconds (ours and the broker's) say what
    // the work costs, and the rate two free cores would give it (the two processes run side by side).
    const timed = async (what: string, fn: () => Promise<number>) => {
      const started = Date.now();
      const cpu0 = process.cpuUsage();
      const b0 = brokerCpu();
      const n = await fn();
      const s = (Date.now() - started) / 1000;
      const c = process.cpuUsage(cpu0);
      const ours = (c.user + c.system) / 1e6;
      const broker = brokerCpu() - b0;
      line({
        step: what,
        queueType,
        count: n,
        seconds: s,
        rate: Math.round(n / s),
        cpu_ours_s: Number(ours.toFixed(2)),
        cpu_broker_s: Number(broker.toFixed(2)),
        rate_on_two_free_cores: Math.round(n / Math.max(ours, broker, (ours + broker) / 2)),
      });
    };
    await timed('release --queue', () => broker.releaseDelayed(QUEUE));
    const released = await broker.inspectQueue(QUEUE);
    // Each once: none of the released left in its level.
    line({ step: 'released arrived', messages: released?.messageCount, left: await broker.purgeDelayed(QUEUE) });
    await broker.withChannel((ch) => ch.purgeQueue(QUEUE));
    await park(node.url, count, QUEUE);
    await park(node.url, Math.round(count / 20), OTHER);
    await timed('purge --queue (5% other queue kept)', () => broker.purgeDelayed(QUEUE));
    await park(node.url, count, QUEUE);
    await timed('purge (every queue)', () => broker.purgeDelayed());
    line({ step: 'done', ...(await totalMb()) });
  } finally {
    await broker.close().catch(() => undefined);
    await node.remove();
  }
}

await main();
