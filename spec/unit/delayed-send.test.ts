/** delayed.ts: the one place that decides what a delay store keeps, and how a delivery is deferred on a broker that cannot do it atomically. */
import type { Broker, OutgoingMessage } from '../../lib/broker/broker.js';
import { deferDelivery, sendLater, withoutTtl } from '../../lib/broker/delayed.js';
import { fakeDelivery } from '../support/delivery.js';

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

/** A delivery whose settling is written to `order`. */
const orderedDelivery = (order: string[]) =>
  fakeDelivery({ ack: () => void order.push('ack'), reject: () => void order.push('reject') });

/** A broker with a native delay (1 s resolution) and a dead-letter exchange; `more` adds to or changes it. */
const capabilities = (more: Partial<Broker['capabilities']> = {}): Broker['capabilities'] => ({
  nativeDelay: true,
  delayResolutionMs: 1000,
  maxDelayMs: 1e9,
  deadLetterExchange: true,
  ordered: true,
  ...more,
});

test('without atomic defer, the delivery is acked only after the broker has the copy', async () => {
  const order: string[] = [];
  const broker: Pick<Broker, 'capabilities' | 'sendLater' | 'defer'> = {
    capabilities: capabilities(),
    sendLater: async (q) => void order.push(`sendLater ${q}`),
  };
  await deferDelivery(broker, orderedDelivery(order), 5000);
  expect(order).toEqual(['sendLater q', 'ack']);
});

test('without atomic defer, a failed copy leaves the delivery unacked', async () => {
  const order: string[] = [];
  const broker: Pick<Broker, 'capabilities' | 'sendLater' | 'defer'> = {
    capabilities: capabilities(),
    sendLater: async () => {
      throw new Error('no confirm');
    },
  };
  await expect(deferDelivery(broker, orderedDelivery(order), 5000)).rejects.toThrow('no confirm');
  expect(order).toEqual([]);
});

test('with atomic defer, the broker does it all in one operation: no separate send, no separate ack', async () => {
  const order: string[] = [];
  const broker: Pick<Broker, 'capabilities' | 'sendLater' | 'defer'> = {
    capabilities: capabilities({ deadLetterExchange: false, atomicDefer: true }),
    sendLater: async () => void order.push('sendLater'),
    defer: async (_d, ms) => void order.push(`defer ${ms}`),
  };
  await deferDelivery(broker, orderedDelivery(order), 5000);
  expect(order).toEqual(['defer 5000']);
});
