/**
 * `delayed release` (lib/broker/amqp/delayed-tools.ts) while RabbitMQ blocks it: on a node of the test's own, a
 * memory alarm raised mid-release holds the copies' confirms for longer than the walk's stall bound, while the
 * rest of the level fits in the window. The walk must neither end with countdowns still parked nor copy one
 * twice: once the alarm clears, every countdown is in its queue once and none is left in the levels.
 */
import { parkCountdowns } from '../../bench/park-countdowns.js';
import { AmqpBroker } from '../../lib/broker/amqp/amqp-broker.js';
import amqp from '../../lib/broker/amqp/amqplib.js';
import { actOnDelayLevels } from '../../lib/broker/amqp/delayed-tools.js';
import { nullLogger } from '../../lib/logger.js';
import { type RabbitNode, startRabbitNode } from '../support/rabbit-node.js';

// Two windows: when the alarm strikes, the first is in flight and the second is all that is left in the level.
const WINDOW = 2_000;
const COUNT = 2 * WINDOW;
const QUEUE = 'release_through_alarm';
const ALARM_MS = 6_000;
let node: RabbitNode;
let broker: AmqpBroker;

beforeAll(async () => {
  node = await startRabbitNode();
  broker = new AmqpBroker({ url: node.url, logger: nullLogger() });
  await broker.connect();
  await broker.declareDelayed({ queueType: 'quorum' });
  await broker.declareQueue({ name: QUEUE });
}, 120_000);

afterAll(async () => {
  await broker?.close().catch(() => undefined);
  await node?.remove();
}, 60_000);

test('a release blocked by a memory alarm longer than its stall bound releases every countdown once when the alarm clears', async () => {
  await parkCountdowns(node.url, QUEUE, COUNT);
  const model = await amqp.connect(node.url);
  let alarmAt = 0;
  try {
    const released = actOnDelayLevels(model, 'release', QUEUE, {
      prefetch: WINDOW,
      onProgress: () => {
        if (alarmAt > 0) return;
        alarmAt = Date.now();
        void node.ctl('set_vm_memory_high_watermark', '0.0000001');
      },
    });
    await new Promise((r) => setTimeout(r, 2_000));
    expect(alarmAt).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, Math.max(0, alarmAt + ALARM_MS - Date.now())));
    await node.ctl('set_vm_memory_high_watermark', '0.4');
    const outcome = await released;
    const arrived = (await broker.inspectQueue(QUEUE))?.messageCount;
    const left = await broker.purgeDelayed(QUEUE);
    process.stdout.write(
      `release through a ${ALARM_MS} ms alarm: released ${outcome.acted}, arrived ${arrived}, left ${left}, caught ${outcome.caught}\n`,
    );
    expect(outcome.acted).toBe(COUNT);
    expect(outcome.doubled).toEqual([]);
    expect(arrived).toBe(COUNT);
    expect(left).toBe(0);
  } finally {
    await model.close().catch(() => undefined);
  }
}, 180_000);
