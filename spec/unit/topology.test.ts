import {
  DELAY_DELIVERY_EXCHANGE,
  delayBinding,
  delayEntryExchange,
  delayRoutingKey,
  delayTopology,
} from '../../lib/broker/amqp/topology.js';
import { loadFixture } from '../support/fixtures.js';

describe("Celery 5.5's native delayed delivery topology", () => {
  test('routing keys match kombu calculate_routing_key (golden)', () => {
    const cases = loadFixture('native-delayed-delivery-routing-keys.json').cases as Array<{
      countdown: number;
      routing_key: string;
      result: string;
    }>;
    expect(cases.length).toBeGreaterThan(0);
    for (const c of cases) expect(delayRoutingKey(c.countdown, c.routing_key)).toBe(c.result);
  });

  test('countdowns outside 1 s … 2^28−1 s are refused', () => {
    expect(() => delayRoutingKey(0.5, 'q')).toThrow(RangeError);
    expect(() => delayRoutingKey(2 ** 28, 'q')).toThrow(RangeError);
    expect(delayRoutingKey(7 * 24 * 3600, 'q').split('.')).toHaveLength(29);
  });

  test('28 levels, each parking 2^L s and dead-lettering to the next, as kombu declares them', () => {
    const t = delayTopology('quorum');
    expect(t.queues.filter((q) => /^celery_delayed_\d+$/.test(q.name))).toHaveLength(28);
    const q5 = t.queues.find((q) => q.name === 'celery_delayed_5');
    expect(q5?.arguments).toEqual({
      'x-queue-type': 'quorum',
      'x-overflow': 'reject-publish',
      'x-message-ttl': 32_000,
      'x-dead-letter-exchange': 'celery_delayed_4',
      'x-dead-letter-strategy': 'at-least-once',
    });
    expect(t.queues.find((q) => q.name === 'celery_delayed_0')?.arguments?.['x-dead-letter-exchange']).toBe(
      DELAY_DELIVERY_EXCHANGE,
    );
    expect(t.bindings).toContainEqual({
      destination: 'celery_delayed_27',
      source: 'celery_delayed_27',
      pattern: '1.#',
    });
    expect(t.bindings).toContainEqual({
      destination: 'celery_delayed_26',
      source: 'celery_delayed_27',
      pattern: '0.#',
      toExchange: true,
    });
    expect(t.bindings).toContainEqual({
      destination: 'celery_delayed_0',
      source: 'celery_delayed_0',
      pattern: `${'*.'.repeat(27)}1.#`,
    });
  });

  test('classic delay queues have no quorum-only argument', () => {
    expect(delayTopology('classic').queues[0]?.arguments).not.toHaveProperty('x-dead-letter-strategy');
  });

  test('a delayed message enters at the level of its highest set bit', () => {
    expect(delayEntryExchange(1)).toBe('celery_delayed_0');
    expect(delayEntryExchange(2)).toBe('celery_delayed_1');
    expect(delayEntryExchange(3600)).toBe('celery_delayed_11');
    expect(delayEntryExchange(2 ** 28 - 1)).toBe('celery_delayed_27');
    // That level's queue binding matches the key, so nothing above it was needed.
    expect(delayRoutingKey(3600, 'q').split('.')[27 - 11]).toBe('1');
  });

  test('a zero-TTL sink takes a copy of every message leaving the topology, so none is ever unroutable', () => {
    const t = delayTopology('quorum');
    expect(t.queues).toContainEqual({
      name: 'celery_delayed_delivery_sink',
      durable: true,
      arguments: { 'x-queue-type': 'quorum', 'x-message-ttl': 0 },
    });
    // Classic levels, classic sink (a single broker, as before).
    expect(delayTopology('classic').queues).toContainEqual({
      name: 'celery_delayed_delivery_sink',
      durable: true,
      arguments: { 'x-message-ttl': 0 },
    });
    expect(t.bindings).toContainEqual({
      destination: 'celery_delayed_delivery_sink',
      source: DELAY_DELIVERY_EXCHANGE,
      pattern: '#',
    });
  });

  test('a queue binding matches exactly 28 bit words then the queue name', () => {
    expect(delayBinding('a.b').pattern).toBe(`${'*.'.repeat(28)}a.b`);
  });
});
