/**
 * Broker topology as data, declared by `Broker.assertTopology`: the delay levels of Celery 5.5's native
 * delayed delivery (kombu/transport/native_delayed_delivery.py), byte for byte, so that Python producers
 * on quorum queues and this worker share one topology.
 *
 * A delay of n seconds is written in binary, 28 bits, MSB first, one word per bit, in the routing key:
 * `0.0.….1.0.1.0.<queue>`. Level L (27 … 0) parks messages whose bit L is 1 in queue `celery_delayed_L`
 * for 2^L s, then dead-letters them to level L−1; a 0 bit skips to the next level through an
 * exchange-to-exchange binding. Every message in a level waits the same time, so no message ever waits
 * behind a longer one. Level 0 hands off to `celery_delayed_delivery`, which routes by the queue name.
 */
import type { DelayQueueType, ExchangeSpec, SubscriptionSpec } from '../broker.js';

export interface ExchangeDecl {
  name: string;
  type: 'direct' | 'topic' | 'fanout';
  durable: boolean;
  autoDelete?: boolean;
}

export interface QueueDecl {
  name: string;
  durable: boolean;
  autoDelete?: boolean;
  exclusive?: boolean;
  arguments?: Record<string, unknown>;
}

export interface BindingDecl {
  /** A queue, or an exchange when `toExchange` is set. */
  destination: string;
  source: string;
  pattern: string;
  toExchange?: boolean;
}

export interface Topology {
  exchanges: ExchangeDecl[];
  queues: QueueDecl[];
  bindings: BindingDecl[];
}

export const DELAY_LEVELS = 28;
export const MAX_DELAY_SECONDS = 2 ** DELAY_LEVELS - 1;
export const DELAY_ENTRY_EXCHANGE = `celery_delayed_${DELAY_LEVELS - 1}`;
export const DELAY_DELIVERY_EXCHANGE = 'celery_delayed_delivery';

export const DELAY_SINK_QUEUE = 'celery_delayed_delivery_sink';

/** kombu `calculate_routing_key(countdown, routing_key)`. */
export function delayRoutingKey(countdownSeconds: number, routingKey: string): string {
  const n = Math.trunc(countdownSeconds);
  if (n < 1 || n > MAX_DELAY_SECONDS) {
    throw new RangeError(`countdown must be from 1 to ${MAX_DELAY_SECONDS} seconds, got ${countdownSeconds}`);
  }
  if (!routingKey) throw new RangeError('routing key must be non-empty');
  return `${n.toString(2).padStart(DELAY_LEVELS, '0').split('').join('.')}.${routingKey}`;
}

/**
 * Where a delayed message enters the topology. kombu always publishes to level 27; entering at the level of
 * the highest set bit is equivalent (the levels above would only pass it down through their 0-bit
 * exchange bindings) and much cheaper: each topic hop costs the broker, and 26 of them cut confirmed
 * publishes of a 2-second delay from ~400/s to ~6,000/s on our CI machine.
 */
export function delayEntryExchange(countdownSeconds: number): string {
  const n = Math.trunc(countdownSeconds);
  if (n < 1) throw new RangeError(`countdown must be at least 1 second, got ${countdownSeconds}`);
  return `celery_delayed_${Math.min(DELAY_LEVELS - 1, Math.floor(Math.log2(n)))}`;
}

const stars = (n: number) => '*.'.repeat(n);

export function delayTopology(queueType: DelayQueueType = 'quorum'): Topology {
  const t: Topology = { exchanges: [], queues: [], bindings: [] };
  for (let level = DELAY_LEVELS - 1; level >= 0; level--) {
    const name = `celery_delayed_${level}`;
    const next = level > 0 ? `celery_delayed_${level - 1}` : DELAY_DELIVERY_EXCHANGE;
    t.exchanges.push({ name, type: 'topic', durable: true });
    t.queues.push({
      name,
      durable: true,
      arguments: {
        'x-queue-type': queueType,
        'x-overflow': 'reject-publish',
        'x-message-ttl': 2 ** level * 1000,
        'x-dead-letter-exchange': next,
        ...(queueType === 'quorum' ? { 'x-dead-letter-strategy': 'at-least-once' } : {}),
      },
    });
    t.bindings.push({ destination: name, source: name, pattern: `${stars(DELAY_LEVELS - 1 - level)}1.#` });
    if (level > 0) {
      t.bindings.push({
        destination: next,
        source: name,
        pattern: `${stars(DELAY_LEVELS - 1 - level)}0.#`,
        toExchange: true,
      });
    }
  }
  t.exchanges.push({ name: DELAY_DELIVERY_EXCHANGE, type: 'topic', durable: true });
  t.bindings.push({
    destination: DELAY_DELIVERY_EXCHANGE,
    source: 'celery_delayed_0',
    pattern: `${stars(DELAY_LEVELS - 1)}0.#`,
    toExchange: true,
  });
  // Quorum queues dead-letter at-least-once: a message that no queue takes (its queue was deleted while it
  // waited) is retried forever and stalls every message behind it in its level. This sink takes a copy of
  // every message leaving the topology, so each is always routed; its zero TTL drops the copy at once.
  // Of the levels' type: a classic sink lives on one node of a cluster, and while that node is down it can be
  // neither declared (404, home node down: no worker could reconnect) nor take the levels' dead letters.
  t.queues.push({
    name: DELAY_SINK_QUEUE,
    durable: true,
    arguments: { ...(queueType === 'quorum' ? { 'x-queue-type': 'quorum' } : {}), 'x-message-ttl': 0 },
  });
  t.bindings.push({ destination: DELAY_SINK_QUEUE, source: DELAY_DELIVERY_EXCHANGE, pattern: '#' });
  return t;
}

/**
 * Delivers delayed messages for `queue` into it, whatever its type (Celery binds only queues behind topic
 * exchanges). The pattern matches the 28 bit words exactly, so queue `b` never receives `a.b`'s messages.
 */
export function delayBinding(queue: string): BindingDecl {
  return { destination: queue, source: DELAY_DELIVERY_EXCHANGE, pattern: `${stars(DELAY_LEVELS)}${queue}` };
}

/** An exchange of the contract as AMQP declares it. */
export function exchangeDecl(e: ExchangeSpec): ExchangeDecl {
  return { name: e.name, type: e.kind, durable: e.durable };
}

/**
 * A subscriber's own queue on an exchange: transient (not durable, auto-delete), with its expiry and TTL
 * as `x-` arguments; for the pidbox exactly what Celery declares (golden: pidbox-queue-declare).
 */
export function subscriptionTopology(exchange: ExchangeSpec, s: SubscriptionSpec): Topology {
  const args: Record<string, unknown> = {};
  if (s.expiresMs !== undefined) args['x-expires'] = s.expiresMs;
  if (s.messageTtlMs !== undefined) args['x-message-ttl'] = s.messageTtlMs;
  return {
    exchanges: [exchangeDecl(exchange)],
    queues: [{ name: s.queue, durable: false, autoDelete: true, arguments: args }],
    bindings: [{ destination: s.queue, source: exchange.name, pattern: s.pattern ?? '' }],
  };
}
