/**
 * The broker contract in memory: a `MemoryStore` is the datastore, each `MemoryBroker` a client (a
 * process's connection) of it. It keeps what the contract promises (conformance: memory-broker.test.ts)
 * and no more, so the worker's pump, holding, settling and shutdown get fast tests with no network:
 * deliveries arrive asynchronously, a prefetch limits unsettled deliveries per consumer, what a client
 * held unsettled goes back to the head of its queue when it closes or `crash()`es, and `sendLater` holds
 * messages on timers. Exchanges follow kombu's model (fanout, direct, topic with `*` and `#`).
 */
import { EventEmitter } from 'node:events';
import type {
  Broker,
  BrokerCapabilities,
  BrokerEvents,
  BrokerLock,
  ConsumeOptions,
  DeadLetterReason,
  DelayLevelStats,
  Delivery,
  DeliveryHandler,
  ExchangeSpec,
  OutgoingMessage,
  QueueSpec,
  QueueStats,
  Settlement,
  SubscriptionSpec,
} from '../../lib/broker/broker.js';
import { settleEach } from '../../lib/broker/broker.js';
import { sendDeadLetter } from '../../lib/broker/dead-letter.js';
import type { RawMessage } from '../../lib/protocol/types.js';
import { MemLock, MemoryStore } from './memory-store.js';
import type { Entry, MemConsumer, MemQueue } from './memory-store.js';

export { MemoryStore };

class MemDelivery implements Delivery {
  settled = false;
  /** Given back to its queue (its client went away, or a walk ended): it can no longer be settled here. */
  private returned = false;
  constructor(
    private readonly owner: MemoryBroker,
    private readonly epoch: number,
    private readonly entry: Entry,
    readonly queue: string,
    private readonly consumer: MemConsumer | undefined,
    noAck: boolean,
  ) {
    this.settled = noAck;
  }
  get raw(): RawMessage {
    return { body: this.entry.body, properties: this.entry.raw };
  }
  get exchange() {
    return this.entry.exchange;
  }
  get routingKey() {
    return this.entry.routingKey;
  }
  get redelivered() {
    return this.entry.redelivered;
  }
  get live(): boolean {
    return !this.returned && this.owner.epochLive(this.epoch);
  }
  ack(): void {
    this.settle('ack');
  }
  reject(requeue: boolean): void {
    this.settle(requeue ? 'requeue' : 'reject');
  }
  private settle(how: Settlement): void {
    if (this.settled) return;
    this.settled = true;
    if (!this.live) {
      this.owner.staleSettles++;
      return;
    }
    this.owner.forget(this);
    if (this.consumer) this.consumer.unsettled--;
    if (how === 'requeue') this.owner.store.enqueue(this.queue, { ...this.entry, redelivered: true }, true);
    const q = this.owner.store.queue(this.queue);
    if (q) this.owner.store.schedule(q);
  }
  /** Its client went away: back to the head of its queue, to be delivered again. */
  returnToQueue(): void {
    if (this.settled || this.returned) return;
    this.returned = true;
    if (this.consumer) this.consumer.unsettled--;
    this.owner.store.enqueue(this.queue, { ...this.entry, redelivered: true }, true);
  }
}

export interface MemoryBrokerOptions {
  nativeDelay?: boolean;
  delayResolutionMs?: number;
  maxDelayMs?: number;
}

export class MemoryBroker implements Broker {
  readonly kind = 'memory';
  readonly capabilities: BrokerCapabilities;
  connected = false;
  staleSettles = 0;
  private epoch = 0;
  private closed = false;
  private readonly emitter = new EventEmitter();
  private readonly consumers = new Map<string, MemConsumer>();
  private readonly unsettled = new Set<MemDelivery>();
  private readonly locks: MemLock[] = [];

  constructor(
    readonly store: MemoryStore = new MemoryStore(),
    o: MemoryBrokerOptions = {},
  ) {
    this.capabilities = Object.freeze({
      nativeDelay: o.nativeDelay ?? true,
      delayResolutionMs: o.delayResolutionMs ?? 1000,
      maxDelayMs: o.maxDelayMs ?? (2 ** 28 - 1) * 1000,
      deadLetterExchange: false,
      ordered: true,
    });
  }

  epochLive(epoch: number): boolean {
    return this.connected && epoch === this.epoch;
  }

  forget(d: MemDelivery): void {
    this.unsettled.delete(d);
  }

  deliver(q: MemQueue, c: MemConsumer, e: Entry): void {
    const d = new MemDelivery(this, this.epoch, e, q.name, c.noAck ? undefined : c, c.noAck);
    if (!c.noAck) {
      c.unsettled++;
      this.unsettled.add(d);
    }
    c.handler(d);
  }

  on<E extends keyof BrokerEvents>(event: E, listener: BrokerEvents[E]): void {
    this.emitter.on(event, listener);
  }

  private ready(): void {
    if (!this.connected) throw new Error(this.closed ? 'broker connection closed' : 'not connected');
  }

  async connect(): Promise<void> {
    this.closed = false;
    this.restore();
  }

  /** The connection comes back: consumers are re-established, as every broker does after a reconnect. */
  restore(): void {
    if (this.connected || this.closed) return;
    this.epoch++;
    this.connected = true;
    for (const [queue, c] of this.consumers) {
      const q = this.store.declare(queue);
      c.unsettled = 0;
      q.consumers.push(c);
      this.store.schedule(q);
    }
    this.emitter.emit('connected');
  }

  /** The connection is lost: what this client held unsettled returns to its queues; deliveries go stale. */
  crash(err?: Error): void {
    if (!this.connected) return;
    this.drop();
    this.emitter.emit('disconnected', err);
  }

  private drop(): void {
    this.connected = false;
    for (const q of this.store.queues.values()) q.consumers = q.consumers.filter((c) => c.broker !== this);
    // In reverse, each to the head: they keep their order in front of what was still waiting.
    for (const d of [...this.unsettled].reverse()) d.returnToQueue();
    this.unsettled.clear();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    if (this.connected) this.drop();
    this.closed = true;
    this.consumers.clear();
  }

  async declareQueue(spec: QueueSpec): Promise<void> {
    this.ready();
    this.store.declare(spec.name);
  }

  async declareDelayed(): Promise<void> {
    this.ready();
  }

  async inspectQueue(queue: string): Promise<QueueStats | null> {
    this.ready();
    const q = this.store.queue(queue);
    return q ? { messageCount: q.ready.length, consumerCount: q.consumers.length } : null;
  }

  private entry(m: OutgoingMessage, exchange: string, routingKey: string): Entry {
    const p = m.properties;
    return {
      body: Buffer.from(m.body),
      raw: {
        contentType: p.contentType,
        contentEncoding: p.contentEncoding,
        correlationId: p.correlationId,
        replyTo: p.replyTo,
        priority: p.priority,
        deliveryMode: p.deliveryMode,
        expiration: p.expiration,
        headers: p.headers,
      },
      exchange,
      routingKey,
      redelivered: false,
    };
  }

  async send(queue: string, m: OutgoingMessage): Promise<void> {
    this.ready();
    this.store.sent.push({ exchange: '', routingKey: queue, queue, message: m, delayMs: 0 });
    this.store.enqueue(queue, this.entry(m, '', queue));
  }

  async route(exchange: string, routingKey: string, m: OutgoingMessage): Promise<void> {
    this.ready();
    this.store.sent.push({ exchange, routingKey, queue: exchange === '' ? routingKey : null, message: m, delayMs: 0 });
    this.store.route(exchange, routingKey, this.entry(m, exchange, routingKey));
  }

  async sendLater(queue: string, m: OutgoingMessage, delayMs: number): Promise<void> {
    this.ready();
    if (!this.capabilities.nativeDelay) throw new Error('this memory broker does not delay');
    const message = m;
    this.store.sent.push({ exchange: '', routingKey: queue, queue, message, delayMs });
    const e = this.entry(message, '', queue);
    const wait = Math.ceil(delayMs / this.capabilities.delayResolutionMs) * this.capabilities.delayResolutionMs;
    this.store.later(wait, () => this.store.enqueue(queue, e));
  }

  async deadLetter(delivery: Delivery, why: DeadLetterReason): Promise<void> {
    this.ready();
    const declare = async (queue: string): Promise<void> => {
      this.store.declare(queue);
    };
    await sendDeadLetter({ send: (queue, m) => this.send(queue, m), declare }, delivery, why);
  }

  async consume(queue: string, handler: DeliveryHandler, options: ConsumeOptions = {}): Promise<void> {
    this.ready();
    const q = this.store.declare(queue);
    const c: MemConsumer = {
      broker: this,
      handler,
      noAck: options.noAck ?? false,
      prefetch: options.prefetch ?? 0,
      unsettled: 0,
    };
    this.consumers.set(queue, c);
    q.consumers.push(c);
    this.store.schedule(q);
  }

  async cancel(queue: string): Promise<void> {
    const c = this.consumers.get(queue);
    this.consumers.delete(queue);
    const q = this.store.queue(queue);
    if (q && c) q.consumers = q.consumers.filter((x) => x !== c);
  }

  isConsuming(queue: string): boolean {
    return this.connected && this.consumers.has(queue);
  }

  settle(deliveries: readonly Delivery[], how: Settlement): void {
    settleEach(deliveries, how);
  }

  async take(queue: string, max: number, visit: (delivery: Delivery) => Promise<void>): Promise<void> {
    this.ready();
    const q = this.store.queue(queue);
    if (!q) throw new Error(`queue ${queue} does not exist`);
    const taken: MemDelivery[] = [];
    try {
      for (let i = 0; i < max; i++) {
        const e = q.ready.shift();
        if (!e) break;
        const d = new MemDelivery(this, this.epoch, e, queue, undefined, false);
        this.unsettled.add(d);
        taken.push(d);
        await visit(d);
      }
    } finally {
      for (const d of taken.reverse()) {
        this.unsettled.delete(d);
        d.returnToQueue();
      }
    }
  }

  async declareExchange(spec: ExchangeSpec): Promise<void> {
    this.ready();
    if (!this.store.exchanges.has(spec.name)) this.store.exchanges.set(spec.name, { spec, bindings: [] });
  }

  async subscribe(exchange: string, spec: SubscriptionSpec, handler: DeliveryHandler): Promise<void> {
    this.ready();
    const x = this.store.exchanges.get(exchange);
    if (!x) throw new Error(`cannot subscribe to exchange ${exchange}: it was not declared`);
    this.store.declare(spec.queue);
    x.bindings.push({ queue: spec.queue, pattern: spec.pattern ?? '' });
    await this.consume(spec.queue, handler, { noAck: true });
  }

  async delayedStats(): Promise<DelayLevelStats[]> {
    return [];
  }

  lock(name: string): BrokerLock {
    const l = new MemLock(this.store, name);
    this.locks.push(l);
    return l;
  }

  /** The process holding this client's locks died: they are free, and their holders hear it. */
  loseLocks(): void {
    for (const l of this.locks) l.lose();
  }
}
