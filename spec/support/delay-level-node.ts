/**
 * A RabbitMQ node of the test's own with the delay levels declared (quorum), and what the delay-level fault tests
 * do on it: bind a queue for delayed delivery, send it one-second countdowns, delete queues while countdowns are
 * dead-lettered into them, and probe the last level with one countdown to a live queue.
 */
import fs from 'node:fs';
import type { ConfirmChannel } from 'amqplib';
import { retireQueues } from '../../bench/retire-queue.js';
import { topologyOn } from '../../lib/broker/amqp/amqp-declare.js';
import amqp from '../../lib/broker/amqp/amqplib.js';
import { delayBinding, delayEntryExchange, delayRoutingKey, delayTopology } from '../../lib/broker/amqp/topology.js';
import { type RabbitNode, startRabbitNode } from './rabbit-node.js';

type Conn = Awaited<ReturnType<typeof amqp.connect>>;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface DelayLevelNode {
  node: RabbitNode;
  conn: Conn;
  ch: ConfirmChannel;
  /** Ten queues each get 2,000 one-second countdowns and are removed (`remove`) as those come out of the last level. */
  deleteUnderDelivery(label: string, remove: (queue: string) => Promise<void>): Promise<void>;
  /** ms until a one-second countdown to a live queue arrives, or -1 after `giveUpMs`. */
  probe(label: string, giveUpMs?: number): Promise<number>;
  /**
   * The most messages one level's dead-letter worker holds stuck (as .ci/heal-delay-levels.erl tells them); at 32,
   * its prefetch, the level is stalled. Fewer only slow it: a probe can give up and the level still flow.
   */
  mostStuck(): Promise<number>;
  close(): Promise<void>;
}

export async function startDelayLevelNode(): Promise<DelayLevelNode> {
  const node = await startRabbitNode();
  const conn = await amqp.connect(node.url);
  const ch = await conn.createConfirmChannel();
  await topologyOn(conn, delayTopology('quorum'));

  const declareBound = async (queue: string) => {
    await ch.assertQueue(queue, { durable: true });
    const { source, pattern } = delayBinding(queue);
    await ch.bindQueue(queue, source, pattern);
  };
  const sendIn1s = (queue: string, body: string) =>
    void ch.publish(delayEntryExchange(1), delayRoutingKey(1, queue), Buffer.from(body), { persistent: true });

  return {
    node,
    conn,
    ch,
    async deleteUnderDelivery(label, remove) {
      for (let round = 0; round < 10; round++) {
        const q = `${label}_${round}`;
        await declareBound(q);
        for (let i = 0; i < 2000; i++) sendIn1s(q, 'x');
        await ch.waitForConfirms();
        await sleep(1000 + (round % 5) * 50);
        await remove(q);
      }
      await sleep(3000);
    },
    async probe(label, giveUpMs = 8000) {
      const q = `${label}_probe`;
      await declareBound(q);
      const t0 = Date.now();
      sendIn1s(q, 'probe');
      await ch.waitForConfirms();
      try {
        for (;;) {
          if (await ch.get(q, { noAck: true })) return Date.now() - t0;
          if (Date.now() - t0 > giveUpMs) return -1;
          await sleep(100);
        }
      } finally {
        await retireQueues(conn, [q]);
      }
    },
    async mostStuck() {
      const heal = fs.readFileSync('.ci/heal-delay-levels.erl', 'utf8');
      // The heal's own reading of the workers, up to where it starts acting.
      const act = heal.indexOf('[exit(W, kill) || W <- Restart],');
      if (act < 0) throw new Error('.ci/heal-delay-levels.erl no longer kills as mostStuck expects');
      const count = [
        heal.slice(0, act),
        'StuckIn = fun(S) -> case catch maps:values(element(8, S)) of Ps when is_list(Ps) -> length(lists:filter(IsStuck, Ps)); _ -> 0 end end,',
        'lists:max([0 | [StuckIn(S) || {_, S} <- States, IsLevel(S)]]).',
      ].join('\n');
      return Number((await node.ctl('eval', count)).trim());
    },
    async close() {
      await conn.close().catch(() => undefined);
      await node.remove();
    },
  };
}
