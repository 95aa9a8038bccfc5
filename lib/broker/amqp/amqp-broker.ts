/**
 * The AMQP 0-9-1 broker on amqplib: one connection, a consume channel with a per-consumer prefetch, and a
 * confirm channel for everything the worker publishes.
 *
 * Recovery is ours rather than amqplib's `recovery` option because channel-only closures (a 406 from an
 * inequivalent declare, an unknown delivery tag, RabbitMQ's consumer_timeout) leave the connection up; we
 * treat any unexpected channel close as a lost connection, reconnect with backoff, and restore prefetch,
 * queues and consumers. Deliveries from before a reconnect can no longer be settled: the broker redelivers them.
 */
import type { Channel, ChannelModel, ConfirmChannel, ConsumeMessage, GetMessage } from 'amqplib';
import { EventEmitter } from 'node:events';
import { BrokerError, UnroutableError, coerceError, hasCode } from '../../errors.js';
import type { Logger } from '../../logger.js';
import type { PublishProperties } from '../../protocol/encode.js';
import { toAmqpTable } from './amqp-table.js';
import { AckBatcher, type AckSlot } from './ack-batcher.js';
import type {
  Broker,
  BrokerCapabilities,
  BrokerEvents,
  BrokerLock,
  ConsumeOptions,
  DeadLetterReason,
  DelayLevelStats,
  DelayQueueType,
  Delivery,
  DeliveryHandler,
  ExchangeSpec,
  OutgoingMessage,
  QueueSpec,
  QueueStats,
  Settlement,
  SubscriptionSpec,
} from '../broker.js';
import { redactUrl } from '../../config/settings.js';
import type { TlsSettings } from '../../config/tls.js';
import { copyProperties, deadLetterHeaders } from '../republish.js';
import { FailoverList, connectTo } from './amqp-connect.js';
import { AmqpLock } from './amqp-lock.js';
import { delayedStats } from './delayed-stats.js';
import {
  MAX_DELAY_SECONDS,
  type QueueDecl,
  type Topology,
  delayBinding,
  delayEntryExchange,
  delayRoutingKey,
  delayTopology,
  exchangeDecl,
  subscriptionTopology,
} from './topology.js';

export interface AmqpBrokerOptions {
  /** One URL, or Celery's failover list `amqp://a;amqp://b` (tried round-robin, the next one on loss). */
  url: string;
  logger: Logger;
  heartbeatSeconds?: number;
  /** Name shown in the RabbitMQ management UI. */
  connectionName?: string;
  reconnectInitialMs?: number;
  reconnectMaxMs?: number;
  /** How long a publish waits for a connection before it fails. */
  publishTimeoutMs?: number;
  /** Heartbeat of a lock's own connection: how soon a dead holder's lock is free. */
  lockHeartbeatSeconds?: number;
  /** Celery's `broker_use_ssl`. */
  tls?: TlsSettings | undefined;
  /** One connection attempt's budget before the next URL is tried. */
  connectTimeoutMs?: number | undefined;
  /** Type of the task queues declared here when they do not exist (Celery's `task_default_queue_type`). */
  queueType?: DelayQueueType | undefined;
}

const AMQP_CAPABILITIES: BrokerCapabilities = Object.freeze({
  nativeDelay: true,
  delayResolutionMs: 1000,
  maxDelayMs: MAX_DELAY_SECONDS * 1000,
  deadLetterExchange: true,
  ordered: true,
});

function amqpCode(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

export { withHeartbeat } from './amqp-connect.js';

/** What a stale ack reports: the delivery it was for. */
interface AckMeta {
  queue: string;
  correlationId: string | undefined;
}

/** The consume channel's acks (ack-batcher.ts); a delivery of a scratch channel (`take`) has none. */
interface Batched {
  batcher: AckBatcher<AckMeta>;
  slot: AckSlot<AckMeta>;
}

class AmqpDelivery implements Delivery {
  settled = false;
  constructor(
    private readonly broker: AmqpBroker,
    private readonly channel: Channel,
    private readonly msg: ConsumeMessage | GetMessage,
    readonly queue: string,
    private readonly batched?: Batched,
  ) {}
  private rawView: Delivery['raw'] | undefined;
  /** Built once: the worker reads it to decode, to log and to settle. */
  get raw(): Delivery['raw'] {
    return (this.rawView ??= this.view());
  }
  private view(): Delivery['raw'] {
    const p = this.msg.properties;
    return {
      body: this.msg.content,
      properties: {
        contentType: p.contentType as string | undefined,
        contentEncoding: p.contentEncoding as string | undefined,
        correlationId: p.correlationId as string | undefined,
        replyTo: p.replyTo as string | undefined,
        priority: p.priority as number | undefined,
        deliveryMode: p.deliveryMode as number | undefined,
        expiration: p.expiration as string | undefined,
        messageId: p.messageId as string | undefined,
        timestamp: p.timestamp as number | undefined,
        type: p.type as string | undefined,
        appId: p.appId as string | undefined,
        userId: p.userId as string | undefined,
        headers: p.headers,
      },
    };
  }
  get exchange() {
    return this.msg.fields.exchange;
  }
  get routingKey() {
    return this.msg.fields.routingKey;
  }
  get redelivered() {
    return this.msg.fields.redelivered;
  }
  get live(): boolean {
    return this.broker.isLive(this.channel);
  }
  ack(): void {
    const b = this.batched;
    this.settle('ack', () => {
      if (b) {
        if (!b.batcher.ack(b.slot)) throw new BrokerError('channel closed');
      } else this.channel.ack(this.msg);
    });
  }
  reject(requeue: boolean): void {
    this.settle(requeue ? 'requeue' : 'reject', () => {
      try {
        this.channel.reject(this.msg, requeue);
      } finally {
        this.batched?.batcher.release(this.batched.slot);
      }
    });
  }
  private settle(what: string, fn: () => void): void {
    if (this.settled) return;
    this.settled = true;
    // Whether the channel lives is the only question: a settle right after a reconnect, before the
    // connection is reported up, is on a live channel and must go out (it used to be skipped silently).
    if (this.live) {
      try {
        fn();
        return;
      } catch {
        // The channel closed under us: counted below.
      }
    }
    this.broker.staleSettle(this.queue, what, this.msg.properties.correlationId as string | undefined);
  }
}

interface Consumer {
  handler: DeliveryHandler;
  noAck: boolean;
  prefetch: number | undefined;
  tag?: string | undefined;
  /** Set while the broker has cancelled it (its queue was deleted) and it is being restored. */
  restoring?: { attempt: number; timer?: NodeJS.Timeout | undefined };
}

interface PendingMandatory {
  exchange: string;
  routingKey: string;
  body: Buffer;
  returned?: string;
}

export class AmqpBroker implements Broker {
  readonly kind = 'amqp';
  readonly capabilities = AMQP_CAPABILITIES;
  private model: ChannelModel | undefined;
  private consumeCh: Channel | undefined;
  private acks: AckBatcher<AckMeta> | undefined;
  private publishCh: ConfirmChannel | undefined;
  /** Mandatory publishes awaiting their confirm; `returned` is set when the broker routed one nowhere. */
  private readonly mandatory = new Set<PendingMandatory>();
  private readonly liveChannels = new WeakSet<Channel>();
  private readonly consumers = new Map<string, Consumer>();
  private readonly queues = new Map<string, QueueSpec>();
  private readonly topologies = new Map<string, Topology>();
  private readonly exchanges = new Map<string, ExchangeSpec>();
  /** Set by `declareDelayed`: task queues declared from then on are bound to the delay topology. */
  private delayQueueType: DelayQueueType | undefined;
  /** While `declareDelayed` runs: what sends into the levels wait for. */
  private delayLevelsPending: Promise<void> | undefined;
  private readonly deadLetterQueues = new Set<string>();
  private readonly events = new EventEmitter();
  private closing = false;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private attempt = 0;
  private readyWaiters: Array<() => void> = [];
  connected = false;
  /** Settles that could not be sent because their channel was gone (the broker redelivers those messages). */
  staleSettles = 0;
  /** When the connection was lost, for the reconnect log line. */
  private lostAt: number | undefined;
  private everConnected = false;
  private readonly failover: FailoverList;
  private connectedTo: string | undefined;

  constructor(private readonly opts: AmqpBrokerOptions) {
    this.failover = new FailoverList(opts.url);
  }

  /** The broker this connection is on now (password hidden); undefined while disconnected. */
  get connectedUrl(): string | undefined {
    return this.connected ? this.connectedTo : undefined;
  }

  on<E extends keyof BrokerEvents>(event: E, listener: BrokerEvents[E]): void {
    this.events.on(event, listener);
  }

  isLive(channel: Channel): boolean {
    return this.liveChannels.has(channel);
  }

  /** A settle whose channel is gone: never silent. */
  staleSettle(queue: string, what: string, correlationId: string | undefined): void {
    this.staleSettles++;
    this.opts.logger.warn(`could not ${what} a message of ${queue}: the channel it came on is gone; the broker redelivers it`, {
      queue,
      correlation_id: correlationId,
    });
  }

  async connect(): Promise<void> {
    this.closing = false;
    for (;;) {
      try {
        await this.open();
        return;
      } catch (err) {
        if (this.closing) throw new BrokerError('closed while connecting', { cause: err });
        this.lostAt ??= Date.now();
        const delay = this.afterFailure();
        this.opts.logger.warn(`broker connection failed, ${this.retryWhat(delay)}`, {
          error: coerceError(err).message,
        });
        await new Promise((r) => setTimeout(r, delay));
      }
    }
  }

  /**
   * Moves to the next URL of the failover list; the wait before trying it is 0 until every URL has failed
   * once in a row (kombu backs off only after a full cycle), then the usual backoff.
   */
  private afterFailure(): number {
    this.failover.failed();
    return this.failover.roundDone ? this.nextDelay() : 0;
  }

  private retryWhat(delay: number): string {
    const url = this.failover.urls.length > 1 ? ` with ${redactUrl(this.failover.current)}` : '';
    return `retrying${url} in ${delay} ms`;
  }

  private nextDelay(): number {
    const initial = this.opts.reconnectInitialMs ?? 200;
    const max = this.opts.reconnectMaxMs ?? 15_000;
    const base = Math.min(max, initial * 2 ** this.attempt++);
    return Math.round(base * (0.8 + Math.random() * 0.4));
  }

  private endpoint() {
    return {
      heartbeatSeconds: this.opts.heartbeatSeconds ?? 60,
      connectionName: this.opts.connectionName ?? 'smarter-worker',
      tls: this.opts.tls,
      connectTimeoutMs: this.opts.connectTimeoutMs ?? 4000,
    };
  }

  private async open(): Promise<void> {
    const url = this.failover.current;
    const model = await connectTo(url, this.endpoint());
    model.on('error', (err: Error) => this.opts.logger.warn('broker connection error', { error: err.message }));
    model.on('close', (err?: Error) => this.lost(model, err));
    try {
      await this.setUpOn(model, url);
    } catch (err) {
      // A node that accepts connections but cannot serve yet (a quorum queue without a leader): try the next.
      if (this.model === model) {
        for (const ch of [this.consumeCh, this.publishCh]) if (ch) this.liveChannels.delete(ch);
        this.model = undefined;
        this.consumeCh = undefined;
        this.publishCh = undefined;
      }
      await model.close().catch(() => undefined);
      throw err;
    }
  }

  /** Channels, topology, queues and consumers on a fresh connection, then everyone waiting hears of it. */
  private async setUpOn(model: ChannelModel, url: string): Promise<void> {
    const consumeCh = await model.createChannel();
    const publishCh = await model.createConfirmChannel();
    // RabbitMQ sends a mandatory message's basic.return before its basic.ack: the publish it belongs to is
    // still pending when the return arrives, and fails when its confirm does.
    publishCh.on('return', (m: { fields: { exchange: string; routingKey: string; replyText?: string }; content: Buffer }) => {
      for (const p of this.mandatory) {
        if (!p.returned && p.exchange === m.fields.exchange && p.routingKey === m.fields.routingKey && p.body.equals(m.content)) {
          p.returned = m.fields.replyText ?? 'NO_ROUTE';
          return;
        }
      }
    });
    for (const ch of [consumeCh, publishCh]) {
      this.liveChannels.add(ch);
      ch.on('error', (err: Error) => this.opts.logger.warn('broker channel error', { error: err.message }));
      ch.on('close', () => {
        this.liveChannels.delete(ch);
        // A channel-only closure: restart the whole connection so consumers and prefetch are restored.
        if (!this.closing && this.model === model) void model.close().catch(() => undefined);
      });
    }
    const acks = this.ackBatcher(consumeCh);
    consumeCh.on('close', () => this.dropAcks(acks));
    this.model = model;
    this.consumeCh = consumeCh;
    this.acks = acks;
    this.publishCh = publishCh;
    for (const t of this.topologies.values()) await this.topologyOn(model, t);
    for (const spec of this.queues.values()) await this.declareOn(model, spec);
    for (const [queue, c] of this.consumers) {
      if (c.restoring?.timer) clearTimeout(c.restoring.timer);
      // A queue deleted while we were away is declared again like every other.
      c.tag = await this.startConsumer(queue, c);
      c.restoring = undefined;
    }
    this.connected = true;
    this.attempt = 0;
    this.failover.succeeded();
    this.connectedTo = redactUrl(url);
    this.opts.logger.info(`broker connected to ${this.connectedTo}`, { broker_url: this.connectedTo });
    if (this.lostAt !== undefined) {
      const awayMs = Date.now() - this.lostAt;
      this.lostAt = undefined;
      const what = this.everConnected ? 'broker connection restored after' : 'broker connected after retrying for';
      this.opts.logger.info(`${what} ${(awayMs / 1000).toFixed(1)} s${this.everConnected ? ' away' : ''}`, { away_ms: awayMs });
    }
    this.everConnected = true;
    const waiters = this.readyWaiters;
    this.readyWaiters = [];
    for (const w of waiters) w();
    this.events.emit('connected');
  }

  /** Acks of the consume channel, one `multiple` ack per event-loop turn (ack-batcher.ts). */
  private ackBatcher(ch: Channel): AckBatcher<AckMeta> {
    const batcher: AckBatcher<AckMeta> = new AckBatcher<AckMeta>(
      (tag, multiple) => ch.ack({ fields: { deliveryTag: tag } } as ConsumeMessage, multiple),
      (flush) =>
        void setImmediate(() => {
          try {
            flush();
          } catch {
            // The channel closed under us: what was not sent is redelivered by the broker.
            this.dropAcks(batcher);
          }
        }),
    );
    return batcher;
  }

  /** A consume channel is gone: acks still waiting in its batcher are stale settles, never silent. */
  private dropAcks(batcher: AckBatcher<AckMeta>): void {
    for (const m of batcher.drop()) this.staleSettle(m.queue, 'ack', m.correlationId);
  }

  private lost(model: ChannelModel, err: Error | undefined): void {
    if (this.model !== model) return;
    // Lost while being set up: open() fails with it and its caller tries the next URL.
    const established = this.connected;
    // Before anyone hears of the loss, so that what they check next (Delivery.live) already says so.
    if (this.consumeCh) this.liveChannels.delete(this.consumeCh);
    if (this.publishCh) this.liveChannels.delete(this.publishCh);
    if (this.acks) this.dropAcks(this.acks);
    this.acks = undefined;
    this.lostAt ??= Date.now();
    this.connected = false;
    this.model = undefined;
    this.consumeCh = undefined;
    this.publishCh = undefined;
    if (this.closing || !established) return;
    // The node that dropped us is the likeliest to be down (stopped, or still shutting down while it
    // accepts): with a failover list, reconnect to the next one first.
    const delay = this.afterFailure();
    this.opts.logger.warn(`broker connection lost; reconnecting`, { error: err?.message, from: this.connectedTo });
    this.events.emit('disconnected', err);
    this.scheduleReconnect(delay);
  }

  private scheduleReconnect(delay: number): void {
    if (this.reconnectTimer || this.closing) return;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      this.open().catch((err: unknown) => {
        if (this.closing) return;
        const next = this.afterFailure();
        this.opts.logger.warn(`broker reconnect failed, ${this.retryWhat(next)}`, { error: coerceError(err).message });
        this.scheduleReconnect(next);
      });
    }, delay);
  }

  private async ready(): Promise<{ model: ChannelModel; consumeCh: Channel; publishCh: ConfirmChannel }> {
    if (this.closing) throw new BrokerError('broker connection closed');
    if (!this.connected) {
      const timeoutMs = this.opts.publishTimeoutMs ?? 30_000;
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new BrokerError(`no broker connection after ${timeoutMs} ms`)), timeoutMs);
        this.readyWaiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
      if (this.closing) throw new BrokerError('broker connection closed');
    }
    const { model, consumeCh, publishCh } = this;
    if (!model || !consumeCh || !publishCh) throw new BrokerError('broker connection lost');
    return { model, consumeCh, publishCh };
  }

  /** A short-lived channel for operations that may close it (passive declares answer 404 by closing). */
  private async scratch<T>(model: ChannelModel, fn: (ch: Channel) => Promise<T>): Promise<T> {
    const ch = await model.createChannel();
    ch.on('error', () => undefined);
    try {
      return await fn(ch);
    } finally {
      await ch.close().catch(() => undefined);
    }
  }

  /** Counts of a queue by passive declare; null when it does not exist (the 404 closes only a scratch channel). */
  private async statsOn(model: ChannelModel, name: string): Promise<QueueStats | null> {
    return this.scratch(model, async (ch) => {
      try {
        const r = await ch.checkQueue(name);
        return { messageCount: r.messageCount, consumerCount: r.consumerCount };
      } catch (err) {
        if (amqpCode(err) === 404) return null;
        throw err;
      }
    });
  }

  /** Declares a queue only if it does not exist: an existing one may carry other arguments (quorum, priority). */
  private async ensureQueueOn(model: ChannelModel, q: QueueDecl): Promise<void> {
    if ((await this.statsOn(model, q.name)) !== null) return;
    await this.scratch(model, (ch) =>
      ch.assertQueue(q.name, { durable: q.durable, autoDelete: q.autoDelete ?? false, exclusive: q.exclusive ?? false, arguments: q.arguments ?? {} }),
    );
  }

  private async declareOn(model: ChannelModel, spec: QueueSpec): Promise<void> {
    const { name } = spec;
    // Celery's declaration: durable, not exclusive, not auto-delete; arguments only when configured.
    const args = spec.arguments ?? (this.opts.queueType === 'quorum' ? { 'x-queue-type': 'quorum' } : undefined);
    await this.ensureQueueOn(model, { name, durable: true, ...(args ? { arguments: args } : {}) });
    try {
      await this.scratch(model, async (ch) => {
        await ch.assertExchange(name, 'direct', { durable: true, autoDelete: false });
        await ch.bindQueue(name, name, name);
      });
    } catch (err) {
      // The default exchange still routes by queue name, which is how Celery publishes to direct queues.
      this.opts.logger.warn(`could not bind queue ${name} to exchange ${name}`, { error: coerceError(err).message });
    }
  }

  private async topologyOn(model: ChannelModel, t: Topology): Promise<void> {
    await this.scratch(model, async (ch) => {
      await Promise.all(t.exchanges.map((e) => ch.assertExchange(e.name, e.type, { durable: e.durable, autoDelete: e.autoDelete ?? false })));
    });
    // In parallel, each on its own scratch channel (a 404 closes only its own): the 28 delay levels cost
    // one round of round trips at start-up instead of 28.
    await Promise.all(t.queues.map((q) => this.ensureQueueOn(model, q)));
    await this.scratch(model, async (ch) => {
      // Pipelined on one channel: amqplib sends them in order; the first failure fails them all, as before.
      await Promise.all(t.bindings.map((b) => (b.toExchange ? ch.bindExchange(b.destination, b.source, b.pattern) : ch.bindQueue(b.destination, b.source, b.pattern))));
    });
  }

  async assertTopology(t: Topology): Promise<void> {
    const { model } = await this.ready();
    await this.topologyOn(model, t);
    this.topologies.set(JSON.stringify(t), t);
  }

  async declareQueue(spec: QueueSpec): Promise<void> {
    const { model } = await this.ready();
    await this.declareOn(model, spec);
    this.queues.set(spec.name, spec);
    if (this.delayQueueType !== undefined) await this.assertTopology({ exchanges: [], queues: [], bindings: [delayBinding(spec.name)] });
  }

  async declareDelayed(options: { queueType?: DelayQueueType } = {}): Promise<void> {
    const pending = this.declareDelayLevels(options.queueType ?? 'quorum');
    this.delayLevelsPending = pending;
    try {
      await pending;
    } finally {
      if (this.delayLevelsPending === pending) this.delayLevelsPending = undefined;
    }
  }

  private async declareDelayLevels(queueType: DelayQueueType): Promise<void> {
    await this.assertTopology(delayTopology(queueType));
    this.delayQueueType = queueType;
    // The task queues declared meanwhile (the worker declares them beside the levels) get their delay route
    // here; those declared from now on bind their own (declareQueue).
    const queues = [...this.queues.keys()].filter((q) => !this.deadLetterQueues.has(q));
    if (queues.length > 0) await this.assertTopology({ exchanges: [], queues: [], bindings: queues.map(delayBinding) });
  }

  async send(queue: string, m: OutgoingMessage): Promise<void> {
    await this.publish('', queue, m.body, m.properties, true);
  }

  async route(exchange: string, routingKey: string, m: OutgoingMessage): Promise<void> {
    await this.publish(exchange, routingKey, m.body, m.properties);
  }

  async sendLater(queue: string, m: OutgoingMessage, delayMs: number): Promise<void> {
    // A message parked while the levels are being declared (a far ETA received at start-up) waits for them.
    await this.delayLevelsPending?.catch(() => undefined);
    // As given: delayed.ts `sendLater` has dropped the per-message TTL that would fire in the delay queues.
    const seconds = Math.max(1, Math.ceil(delayMs / 1000));
    const entry = delayEntryExchange(seconds);
    try {
      await this.publish(entry, delayRoutingKey(seconds, queue), m.body, m.properties, true);
    } catch (err) {
      if (!hasCode(err, 'BROKER_UNROUTABLE') || this.delayQueueType === undefined) throw err;
      // A delay level was deleted under us (by hand, or by a policy): declared again, the wait goes on.
      this.opts.logger.warn(`delay level missing at ${entry} (deleted?): declaring the delay topology again`, { queue });
      await this.declareDelayed({ queueType: this.delayQueueType });
      await this.publish(entry, delayRoutingKey(seconds, queue), m.body, m.properties, true);
    }
  }

  async deadLetter(delivery: Delivery, why: DeadLetterReason): Promise<void> {
    const copy = () => this.publish('', why.queue, delivery.raw.body, copyProperties(delivery.raw, deadLetterHeaders(delivery, why)), true);
    if (!this.deadLetterQueues.has(why.queue)) await this.declareDeadLetterQueue(why.queue);
    try {
      await copy();
    } catch (err) {
      if (!hasCode(err, 'BROKER_UNROUTABLE')) throw err;
      // Deleted since we declared it: the copy must land before the original is settled.
      await this.declareDeadLetterQueue(why.queue);
      await copy();
    }
  }

  private async declareDeadLetterQueue(queue: string): Promise<void> {
    // Declared as a task queue, but never bound to the delay topology: nothing is sent to it later.
    const { model } = await this.ready();
    await this.declareOn(model, { name: queue });
    this.queues.set(queue, { name: queue });
    this.deadLetterQueues.add(queue);
  }

  settle(deliveries: readonly Delivery[], how: Settlement): void {
    for (const d of deliveries) {
      if (d.settled) continue;
      if (how === 'ack') d.ack();
      else d.reject(how === 'requeue');
    }
  }

  async take(queue: string, max: number, visit: (delivery: Delivery) => Promise<void>): Promise<void> {
    const { model } = await this.ready();
    // On its own channel: closing it at the end returns whatever was left unsettled to the queue.
    await this.scratch(model, async (ch) => {
      this.liveChannels.add(ch);
      try {
        for (let i = 0; i < max; i++) {
          const m = await ch.get(queue, { noAck: false });
          if (m === false) break;
          await visit(new AmqpDelivery(this, ch, m, queue));
        }
      } finally {
        this.liveChannels.delete(ch);
      }
    });
  }

  async declareExchange(spec: ExchangeSpec): Promise<void> {
    await this.assertTopology({ exchanges: [exchangeDecl(spec)], queues: [], bindings: [] });
    this.exchanges.set(spec.name, spec);
  }

  async subscribe(exchange: string, spec: SubscriptionSpec, handler: DeliveryHandler): Promise<void> {
    const e = this.exchanges.get(exchange);
    if (!e) throw new BrokerError(`cannot subscribe to exchange ${exchange}: it was not declared`);
    await this.assertTopology(subscriptionTopology(e, spec));
    await this.consume(spec.queue, handler, { noAck: true });
  }

  lock(name: string): BrokerLock {
    return new AmqpLock(this.opts.url, name, this.opts.logger, this.opts.lockHeartbeatSeconds, { tls: this.opts.tls, connectTimeoutMs: this.opts.connectTimeoutMs ?? 4000 });
  }

  async delayedStats(): Promise<DelayLevelStats[]> {
    return delayedStats(this);
  }

  private async startConsumer(queue: string, c: Consumer): Promise<string> {
    const { handler, noAck } = c;
    const ch = this.consumeCh;
    const acks = this.acks;
    if (!ch || !acks) throw new BrokerError('not connected');
    // Per-consumer prefetch (global=false), set before each consume: quorum queues refuse a channel-wide
    // limit, and a worker consumes one queue in the ADR-030 deployment, where both mean the same.
    if (c.prefetch !== undefined) await ch.prefetch(c.prefetch, false);
    const reply = await ch.consume(
      queue,
      (msg) => {
        if (msg === null) {
          this.cancelledByBroker(queue, ch);
          return;
        }
        // With noAck the broker has already forgotten the message: nothing to settle, nothing to track.
        if (noAck) {
          const delivery = new AmqpDelivery(this, ch, msg, queue);
          delivery.settled = true;
          handler(delivery);
          return;
        }
        const slot = acks.track(msg.fields.deliveryTag, { queue, correlationId: msg.properties.correlationId as string | undefined });
        const delivery = new AmqpDelivery(this, ch, msg, queue, { batcher: acks, slot });
        handler(delivery);
      },
      { noAck },
    );
    return reply.consumerTag;
  }

  /**
   * The broker cancelled a consumer (its queue was deleted, or a quorum queue lost its leader): declare
   * the queue again and consume it again with backoff, as Celery's consumer restarts. Until it consumes
   * again, `isConsuming` says so (readiness and `inspect active_queues` read it).
   */
  private cancelledByBroker(queue: string, ch: Channel): void {
    const c = this.consumers.get(queue);
    if (!c || c.restoring || this.closing) return;
    c.tag = undefined;
    c.restoring = { attempt: 0 };
    this.opts.logger.warn(`consumer of ${queue} was cancelled by the broker (was the queue deleted?); declaring it and consuming it again`, { queue });
    this.scheduleRestore(queue, c, ch);
  }

  private scheduleRestore(queue: string, c: Consumer, ch: Channel): void {
    const r = c.restoring;
    if (!r) return;
    const initial = this.opts.reconnectInitialMs ?? 200;
    const delay = Math.min(this.opts.reconnectMaxMs ?? 15_000, initial * 2 ** r.attempt++);
    r.timer = setTimeout(() => {
      r.timer = undefined;
      // A reconnect restores every consumer itself; a cancel() since means nobody wants it any more.
      if (this.closing || this.consumers.get(queue) !== c || this.consumeCh !== ch || !this.model) return;
      this.restoreOn(this.model, queue, c).then(
        () => this.opts.logger.info(`consuming ${queue} again`, { queue }),
        (err: unknown) => {
          this.opts.logger.warn(`could not consume ${queue} again; retrying`, { queue, error: coerceError(err).message });
          this.scheduleRestore(queue, c, ch);
        },
      );
    }, delay);
  }

  private async restoreOn(model: ChannelModel, queue: string, c: Consumer): Promise<void> {
    const spec = this.queues.get(queue);
    if (spec) await this.declareOn(model, spec);
    // Topologies that declare the queue (pidbox) or bind to it (its delay binding died with it).
    for (const t of this.topologies.values()) {
      if (t.queues.some((q) => q.name === queue) || t.bindings.some((b) => b.destination === queue && !b.toExchange)) await this.topologyOn(model, t);
    }
    c.tag = await this.startConsumer(queue, c);
    c.restoring = undefined;
  }

  isConsuming(queue: string): boolean {
    const c = this.consumers.get(queue);
    return this.connected && c !== undefined && c.tag !== undefined && !c.restoring;
  }

  async consume(queue: string, handler: DeliveryHandler, options: ConsumeOptions = {}): Promise<void> {
    await this.ready();
    // A consumer without its own prefetch keeps the channel's (the last one set), as amqplib does.
    const entry: Consumer = { handler, noAck: options.noAck ?? false, prefetch: options.prefetch };
    this.consumers.set(queue, entry);
    entry.tag = await this.startConsumer(queue, entry);
  }

  async cancel(queue: string): Promise<void> {
    const entry = this.consumers.get(queue);
    this.consumers.delete(queue);
    if (entry?.restoring?.timer) clearTimeout(entry.restoring.timer);
    if (entry?.tag && this.consumeCh && this.connected) await this.consumeCh.cancel(entry.tag).catch(() => undefined);
  }

  /** Publishes with confirm; `mandatory` ones that no queue takes fail with UnroutableError instead of vanishing. */
  async publish(exchange: string, routingKey: string, body: Buffer, p: PublishProperties, mandatory = false): Promise<void> {
    const { publishCh } = await this.ready();
    const pending: PendingMandatory | undefined = mandatory ? { exchange, routingKey, body } : undefined;
    if (pending) this.mandatory.add(pending);
    await new Promise<void>((resolve, reject) => {
      const confirmed = (err: unknown) => {
        if (pending) this.mandatory.delete(pending);
        const returned = pending?.returned;
        if (err) reject(new BrokerError('publish was not confirmed', { cause: err }));
        else if (returned !== undefined) reject(new UnroutableError(exchange, routingKey, returned));
        else resolve();
      };
      publishCh.publish(
        exchange,
        routingKey,
        body,
        {
          contentType: p.contentType,
          contentEncoding: p.contentEncoding,
          headers: toAmqpTable(p.headers),
          deliveryMode: p.deliveryMode,
          priority: p.priority,
          ...(p.correlationId !== undefined ? { correlationId: p.correlationId } : {}),
          ...(p.replyTo !== undefined ? { replyTo: p.replyTo } : {}),
          ...(p.expiration !== undefined ? { expiration: p.expiration } : {}),
          ...p.passthrough,
          mandatory,
        },
        confirmed,
      );
    });
  }

  async inspectQueue(queue: string): Promise<QueueStats | null> {
    const { model } = await this.ready();
    return this.statsOn(model, queue);
  }


  /** Runs topology declarations (delay exchanges, pidbox, events) on a scratch channel. */
  async withChannel<T>(fn: (ch: Channel) => Promise<T>): Promise<T> {
    const { model } = await this.ready();
    return this.scratch(model, fn);
  }

  async close(): Promise<void> {
    this.closing = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
    const model = this.model;
    this.connected = false;
    this.model = undefined;
    // Publishes waiting for a connection fail now instead of holding the process open until they time out.
    const waiters = this.readyWaiters;
    this.readyWaiters = [];
    for (const w of waiters) w();
    // The channels first: amqplib interleaves channels' frames, and a connection close sent at once can
    // overtake acks still queued on the consume channel (those messages would be delivered again).
    try {
      this.acks?.flush();
    } catch {
      // The channel is already gone: the close handler reports what was not sent.
    }
    const channels = [this.consumeCh, this.publishCh];
    this.consumeCh = undefined;
    this.publishCh = undefined;
    for (const ch of channels) if (ch) await ch.close().catch(() => undefined);
    if (model) await model.close().catch(() => undefined);
  }
}
