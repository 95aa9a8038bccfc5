/**
 * The AMQP 0-9-1 broker on amqplib: the broker contract's operations (lib/broker/broker.ts) over the connections
 * that connection.ts opens, watches and opens again (a consuming and a publishing one, as Celery's consumer and
 * producer have). Declarations are kept and restored on every fresh connection (amqp-declare.ts), consumers
 * with their windows (amqp-consumers.ts), publishes wait for their confirm (amqp-publish.ts).
 */
import type { Channel } from 'amqplib';
import { BrokerError } from '../../errors.js';
import type { PublishProperties } from '../../protocol/encode.js';
import { AmqpConsumers, type ConsumerHost } from './amqp-consumers.js';
import { AmqpDelivery } from './amqp-delivery.js';
import type {
  Broker,
  BrokerBlock,
  BrokerCapabilities,
  BrokerEvents,
  BrokerLock,
  ConsumeOptions,
  DeadLetterReason,
  DelayLevelStats,
  DelayQueueType,
  DelayedToolOptions,
  Delivery,
  DeliveryHandler,
  ExchangeSpec,
  OutgoingMessage,
  QueueSpec,
  QueueStats,
  Settlement,
  SubscriptionSpec,
} from '../broker.js';
import { settleEach } from '../broker.js';
import { sendDeadLetter } from '../dead-letter.js';
import { sendOrDeclare } from '../send-or-declare.js';
import { AmqpLock } from './amqp-lock.js';
import { delayedStats } from './delayed-stats.js';
import { actOnDelayLevels } from './delayed-tools.js';
import { AmqpDeclarations, scratch, statsOn } from './amqp-declare.js';
import { AmqpConnection, type AmqpConnectionOptions } from './connection.js';
import { Copies, type Discard, copyKey } from './copies.js';
import type { Renewal } from './stuck-publish.js';
import {
  MAX_DELAY_SECONDS,
  type Topology,
  delayEntryExchange,
  delayRoutingKey,
  subscriptionTopology,
} from './topology.js';

export interface AmqpBrokerOptions extends AmqpConnectionOptions {
  /** Heartbeat of a lock's own connection: how soon a dead holder's lock is free. */
  lockHeartbeatSeconds?: number;
  /** Type of the task queues declared here when they do not exist (Celery's `task_default_queue_type`). */
  queueType?: DelayQueueType | undefined;
  /** Bytes of unsettled deliveries over which the consumers pause (held-window.ts, DEFAULT_HELD_BYTES). */
  heldBytesMax?: number | undefined;
}

const AMQP_CAPABILITIES: BrokerCapabilities = Object.freeze({
  nativeDelay: true,
  delayResolutionMs: 1000,
  maxDelayMs: MAX_DELAY_SECONDS * 1000,
  deadLetterExchange: true,
  ordered: true,
});

export { withHeartbeat } from './amqp-connect.js';

/** Why a task delivery was acked unrun (copies.ts), as the log line says it. */
const DISCARDED: Record<Discard, string> = {
  'second copy': '(a second copy): sent again after a lost confirm, the broker had it already',
  'acked before': 'delivered again: it was acked here, the ack was lost with its connection',
  'ran here': 'out of the delay levels: its message came back unacked and was handled here since it was parked',
  'parked before': 'delivered again: it was parked, and its parked copy was handed on here already',
};

export class AmqpBroker implements Broker {
  readonly kind = 'amqp';
  readonly capabilities = AMQP_CAPABILITIES;
  private readonly conn: AmqpConnection;
  /** Task messages delivered lately, and those that may come twice (copies.ts). */
  private readonly copies = new Copies();
  private readonly declared: AmqpDeclarations;
  private readonly consumers: AmqpConsumers;

  constructor(private readonly opts: AmqpBrokerOptions) {
    this.conn = new AmqpConnection(
      opts,
      async (model) => {
        this.copies.reconnected();
        await this.declared.restoreOn(model);
        await this.consumers.restoreAll();
      },
      this.copies,
    );
    this.declared = new AmqpDeclarations(
      { logger: opts.logger, queueType: opts.queueType },
      async () => (await this.conn.ready()).model,
    );
    const conn = this.conn;
    const host: ConsumerHost = {
      isLive: (ch) => conn.isLive(ch),
      staleSettle: (queue, what, correlationId) => conn.staleSettle(queue, what, correlationId),
      channel: () => conn.consuming,
      model: () => conn.current,
      connected: () => conn.connected,
      closing: () => conn.closing,
      admit: (m) => {
        const why = this.copies.admit(copyKey(m), m.redelivered);
        if (why === undefined) return true;
        const id = String(m.headers?.['id']);
        opts.logger.info(`discarded task ${id} ${DISCARDED[why]}`, {
          task_id: id,
          retries: m.headers?.['retries'],
          reason: why,
        });
        return false;
      },
      acked: (m) => {
        const key = copyKey(m);
        if (key !== undefined) this.copies.acked(key);
      },
    };
    this.consumers = new AmqpConsumers(
      host,
      this.declared,
      opts.logger,
      { initialMs: opts.reconnectInitialMs ?? 200, maxMs: opts.reconnectMaxMs ?? 15_000 },
      opts.heldBytesMax,
    );
  }

  get connected(): boolean {
    return this.conn.connected;
  }

  /** Settles that could not be sent because their channel was gone (the broker redelivers those messages). */
  get staleSettles(): number {
    return this.conn.staleSettles;
  }

  /** Stuck publish channels renewed since start: by a new channel, or by a new connection. */
  get publishRenewals(): Readonly<Record<Renewal, number>> {
    return this.conn.publishRenewals;
  }

  /** Publishes sent again on a renewed channel or connection (each may reach the queue twice). */
  get publishesResentOnRenewal(): number {
    return this.conn.publishesResentOnRenewal;
  }

  /** Set while RabbitMQ blocks the connection that publishes (a memory or disk alarm). */
  get blocked(): BrokerBlock | undefined {
    return this.conn.blocked;
  }

  /** The broker this connection is on now (password hidden); undefined while disconnected. */
  get connectedUrl(): string | undefined {
    return this.conn.connectedUrl;
  }

  on<E extends keyof BrokerEvents>(event: E, listener: BrokerEvents[E]): void {
    this.conn.on(event, listener);
  }

  isLive(channel: Channel): boolean {
    return this.conn.isLive(channel);
  }

  /** A settle whose channel is gone: never silent. */
  staleSettle(queue: string, what: string, correlationId: string | undefined): void {
    this.conn.staleSettle(queue, what, correlationId);
  }

  connect(): Promise<void> {
    return this.conn.connect();
  }

  close(): Promise<void> {
    return this.conn.close();
  }

  async assertTopology(t: Topology): Promise<void> {
    await this.declared.assertTopology(t);
  }

  async declareQueue(spec: QueueSpec): Promise<void> {
    await this.declared.declareQueue(spec);
  }

  async declareDelayed(options: { queueType?: DelayQueueType } = {}): Promise<void> {
    await this.declared.declareDelayed(options);
  }

  async send(queue: string, m: OutgoingMessage): Promise<void> {
    await this.publish('', queue, m.body, m.properties, true);
  }

  async route(exchange: string, routingKey: string, m: OutgoingMessage): Promise<void> {
    await this.publish(exchange, routingKey, m.body, m.properties);
  }

  async sendLater(queue: string, m: OutgoingMessage, delayMs: number): Promise<void> {
    // A message parked while the levels are being declared (a far ETA received at start-up) waits for them.
    await this.declared.delayLevelsReady();
    // As given: delayed.ts `sendLater` has dropped the per-message TTL that would fire in the delay queues.
    const seconds = Math.max(1, Math.ceil(delayMs / 1000));
    const entry = delayEntryExchange(seconds);
    await sendOrDeclare(
      () => this.publish(entry, delayRoutingKey(seconds, queue), m.body, m.properties, true),
      async (unroutable) => {
        const queueType = this.declared.delayQueueType;
        if (queueType === undefined) throw unroutable;
        // A delay level was deleted under us (by hand, or by a policy): declared again, the wait goes on.
        this.opts.logger.warn(`delay level missing at ${entry} (deleted?): declaring the delay topology again`, {
          queue,
        });
        await this.declareDelayed({ queueType });
      },
    );
  }

  async deadLetter(delivery: Delivery, why: DeadLetterReason): Promise<void> {
    await sendDeadLetter(
      {
        send: (queue, m) => this.conn.publish('', queue, m.body, m.properties, true, true),
        declare: (queue) => this.declared.declareDeadLetterQueue(queue),
        isDeclared: (queue) => this.declared.isDeadLetterQueue(queue),
      },
      delivery,
      why,
    );
  }

  settle(deliveries: readonly Delivery[], how: Settlement): void {
    settleEach(deliveries, how);
  }

  async take(queue: string, max: number, visit: (delivery: Delivery) => Promise<void>): Promise<void> {
    const { model } = await this.conn.ready();
    // On its own channel: closing it at the end returns whatever was left unsettled to the queue.
    await scratch(model, async (ch) => {
      this.conn.markLive(ch, true);
      try {
        for (let i = 0; i < max; i++) {
          const m = await ch.get(queue, { noAck: false });
          if (m === false) break;
          await visit(new AmqpDelivery(this, ch, m, queue));
        }
      } finally {
        this.conn.markLive(ch, false);
      }
    });
  }

  async declareExchange(spec: ExchangeSpec): Promise<void> {
    await this.declared.declareExchange(spec);
  }

  async subscribe(exchange: string, spec: SubscriptionSpec, handler: DeliveryHandler): Promise<void> {
    const e = this.declared.exchange(exchange);
    if (!e) throw new BrokerError(`cannot subscribe to exchange ${exchange}: it was not declared`);
    await this.assertTopology(subscriptionTopology(e, spec));
    await this.consume(spec.queue, handler, { noAck: true });
  }

  lock(name: string): BrokerLock {
    return new AmqpLock(this.opts.url, name, this.opts.logger, this.opts.lockHeartbeatSeconds, {
      tls: this.opts.tls,
      connectTimeoutMs: this.opts.connectTimeoutMs ?? 4000,
    });
  }

  async delayedStats(): Promise<DelayLevelStats[]> {
    return delayedStats(this);
  }

  purgeDelayed(queue?: string, options?: DelayedToolOptions): Promise<number> {
    return this.actOnDelayed('purge', queue, options);
  }

  releaseDelayed(queue?: string, options?: DelayedToolOptions): Promise<number> {
    return this.actOnDelayed('release', queue, options);
  }

  private async actOnDelayed(action: 'purge' | 'release', queue?: string, options?: DelayedToolOptions) {
    const { model } = await this.conn.ready();
    const { acted, doubled, refused, caught, reparked } = await actOnDelayLevels(model, action, queue, options);
    if (caught > 0) this.opts.logger.info(`${caught} acked message(s) came back to their level and were settled again`);
    if (reparked > 0) {
      this.opts.logger.info(
        `${reparked} released task(s) were parked again by a worker (a new countdown to their ETA): left parked`,
        { reparked },
      );
    }
    if (refused > 0) {
      this.opts.logger.warn(`${refused} delayed message(s) not released (queue missing?): still parked`, { refused });
    }
    if (doubled.length > 0) {
      this.opts.logger.error(
        `${doubled.length} released message(s) could not be acked in their delay level: they will arrive twice`,
        { task_ids: doubled },
      );
    }
    return acted;
  }

  isConsuming(queue: string): boolean {
    return this.consumers.isConsuming(queue);
  }

  async consume(queue: string, handler: DeliveryHandler, options: ConsumeOptions = {}): Promise<void> {
    await this.conn.ready();
    await this.consumers.consume(queue, handler, options);
  }

  async cancel(queue: string): Promise<void> {
    await this.consumers.cancel(queue);
  }

  /** Publishes with confirm; `mandatory` ones that no queue takes fail with UnroutableError instead of vanishing. */
  async publish(
    exchange: string,
    routingKey: string,
    body: Buffer,
    p: PublishProperties,
    mandatory = false,
  ): Promise<void> {
    // Before it is sent: a copy may arrive before its confirm does.
    this.copies.publishing(copyKey({ headers: p.headers, exchange }));
    await this.conn.publish(exchange, routingKey, body, p, mandatory);
  }

  async inspectQueue(queue: string): Promise<QueueStats | null> {
    const { model } = await this.conn.ready();
    return statsOn(model, queue);
  }

  /** Runs topology declarations (delay exchanges, pidbox, events) on a scratch channel. */
  async withChannel<T>(fn: (ch: Channel) => Promise<T>): Promise<T> {
    const { model } = await this.conn.ready();
    return scratch(model, fn);
  }
}
