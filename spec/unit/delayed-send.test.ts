/** delayed.ts: the one place that decides what a delay store keeps, and how a delivery is deferred on a broker that cannot do it atomically. */
import type { Broker, Delivery, OutgoingMessage } from '../../lib/broker/broker.js';
import { deferDelivery, sendLater, withoutTtl } from '../../lib/broker/delayed.js';

const m: OutgoingMessage = {
  body: Buffer.from('x'),
  properties: {
    contentType: 'application/json',
    contentEncoding: 'utf-8',
    deliveryMode: 2,
    priority: 0,
    expiration: '100',
    headers: { id: '1', expires: '2030-01-01T00:00:00' },
    correlationId: '1',
  },
};

test('a message sent for later loses its per-message TTL and keeps every other property, Celery expires header included', () => {
  const out = withoutTtl(m);
  expect(out.properties).toEqual({
    contentType: 'application/json',
    contentEncoding: 'utf-8',
    deliveryMode: 2,
    priority: 0,
    headers: { id: '1', expires: '2030-01-01T00:00:00' },
    correlationId: '1',
  });
  expect(out.body).toBe(m.body);
  expect(m.properties.expiration).toBe('100');
});

test('sendLater hands the broker the message without its TTL', async () => {
  const sent: OutgoingMessage[] = [];
  await sendLater({ sendLater: async (_q: string, x: OutgoingMessage) => void sent.push(x) }, 'q', m, 5000);
  expect(sent[0]?.properties.expiration).toBeUndefined();
});

function fakeDelivery(order: string[]): Delivery {
  return {
    raw: { body: Buffer.from('x'), properties: { contentType: 'application/json', headers: { id: '1' } } },
    queue: 'q',
    exchange: '',
    routingKey: 'q',
    redelivered: false,
    live: true,
    settled: false,
    ack() {
      order.push('ack');
    },
    reject() {
      order.push('reject');
    },
  };
}

test('without atomic defer, the delivery is acked only after the broker has the copy', async () => {
  const order: string[] = [];
  const broker: Pick<Broker, 'capabilities' | 'sendLater' | 'defer'> = {
    capabilities: {
      nativeDelay: true,
      delayResolutionMs: 1000,
      maxDelayMs: 1e9,
      deadLetterExchange: true,
      ordered: true,
    },
    sendLater: async (q) => void order.push(`sendLater ${q}`),
  };
  await deferDelivery(broker, fakeDelivery(order), 5000);
  expect(order).toEqual(['sendLater q', 'ack']);
});

test('without atomic defer, a failed copy leaves the delivery unacked', async () => {
  const order: string[] = [];
  const broker: Pick<Broker, 'capabilities' | 'sendLater' | 'defer'> = {
    capabilities: {
      nativeDelay: true,
      delayResolutionMs: 1000,
      maxDelayMs: 1e9,
      deadLetterExchange: true,
      ordered: true,
    },
    sendLater: async () => {
      throw new Error('no confirm');
    },
  };
  await expect(deferDelivery(broker, fakeDelivery(order), 5000)).rejects.toThrow('no confirm');
  expect(order).toEqual([]);
});

test('with atomic defer, the broker does it all in one operation: no separate send, no separate ack', async () => {
  const order: string[] = [];
  const broker: Pick<Broker, 'capabilities' | 'sendLater' | 'defer'> = {
    capabilities: {
      nativeDelay: true,
      delayResolutionMs: 1000,
      maxDelayMs: 1e9,
      deadLetterExchange: false,
      ordered: true,
      atomicDefer: true,
    },
    sendLater: async () => void order.push('sendLater'),
    defer: async (_d, ms) => void order.push(`defer ${ms}`),
  };
  await deferDelivery(broker, fakeDelivery(order), 5000);
  expect(order).toEqual(['defer 5000']);
});
