/**
 * The broker contract over Redis, in kombu's layout (see keys.ts and transport.ts): task queues are lists,
 * fanout exchanges are pub/sub, the delayed set is ours. This file holds the contract's operations only; the
 * parts are beside it: the connections (clients.ts), the consuming loops and their QoS (consumer-loop.ts),
 * what the bookkeeping tells (stats.ts), Redis refusing writes at maxmemory (write-block.ts), the options and
 * capabilities (options.ts).
 */
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { Redis } from 'ioredis';
import { ioredis } from './ioredis.js';
import { BrokerError, coerceError } from '../../errors.js';
import type { PublishProperties } from '../../protocol/encode.js';
import type {
  Broker,
  BrokerBlock,
  BrokerCapabilities,
  BrokerBacklog,
  BrokerEvents,
  BrokerLock,
  ConsumeOptions,
  DeadLetterReason,
  DelayLevelStats,
  DelayedToolOptions,
  ParkedMessage,
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
import { deadLetterHeaders } from '../republish.js';
import { RedisClients } from './clients.js';
import { redisTarget } from './connection.js';
import { type Consumer, ConsumerLoop, SETTLE_ATTEMPTS } from './consumer-loop.js';
import { listDelayed, purgeDelayed, releaseDelayed } from './delayed-store.js';
import { RedisDelivery, type Settler } from './delivery.js';
import { RedisFanout } from './fanout.js';
import { KombuKeys } from './keys.js';
import { RedisLeaseLock } from './lease-lock.js';
import { DEFAULT_HELD_BYTES, type RedisBrokerOptions, redisCapabilities } from './options.js';
import { backlog, delayedStats } from './stats.js';
import { KombuRedis } from './transport.js';
import { WriteBlock } from './write-block.js';

export { DEFAULT_HELD_BYTES, DEFAULT_HOLD_MAX_MS, type RedisBrokerOptions } from './options.js';

export class RedisBroker implements Broker {
  readonly kind = 'redis';
  readonly capabilities: BrokerCapabilities;
  readonly keys: KombuKeys;
  readonly visibilityTimeoutSeconds: number;
  private readonly clients: RedisClients;
  private readonly cmd: Redis;
  private readonly transport: KombuRedis;
  private readonly fanout: RedisFanout;
  private readonly consumer: ConsumerLoop;
  private readonly writes: WriteBlock;
  private readonly events = new EventEmitter();
  private readonly fanoutExchanges: Set<string>;
  private readonly exchanges = new Map<string, ExchangeSpec>();

  constructor(private readonly opts: RedisBrokerOptions) {
    const target = redisTarget(opts.url, opts.masterName, opts.tls);
    this.keys = new KombuKeys({ prefix: opts.keyPrefix ?? '', db: target.db });
    this.visibilityTimeoutSeconds = opts.visibilityTimeoutSeconds ?? 3600;
    this.capabilities = redisCapabilities(this.visibilityTimeoutSeconds, opts.holdMaxMs, opts.logger);
    this.clients = new RedisClients(target.options, opts.logger, this.events);
    this.cmd = this.clients.cmd;
    this.transport = new KombuRedis(this.cmd, this.keys);
    this.fanout = new RedisFanout(this.cmd, this.clients.subscriber, this.keys);
    this.fanoutExchanges = new Set(opts.fanoutExchanges ?? ['celery.pidbox', 'celeryev']);
    const closing = () => this.clients.closing;
    this.consumer = new ConsumerLoop({
      transport: this.transport,
      keys: this.keys,
      cmd: this.cmd,
      blocking: this.clients.blocking,
      logger: opts.logger,
      heldBytesMax: opts.heldBytesMax ?? DEFAULT_HELD_BYTES,
      maxBodyBytes: opts.maxBodyBytes ?? 0,
      visibilityTimeoutSeconds: this.visibilityTimeoutSeconds,
      closing,
    });
    // `SET … XX` on a key that does not exist is refused when writes are, and writes nothing when they are not.
    this.writes = new WriteBlock(opts.logger, () => this.cmd.set('_kombu.write-probe', '1', 'XX'), closing);
  }

  get connected(): boolean {
    return this.clients.connected;
  }

  /** Set while Redis refuses writes (maxmemory reached, `OOM command not allowed`). */
  get blocked(): BrokerBlock | undefined {
    return this.writes.blocked;
  }

  get staleSettles(): number {
    return this.consumer.staleSettles;
  }

  /** The primitives, for tools that read the delayed set or the dead-letter list. */
  get kombu(): KombuRedis {
    return this.transport;
  }

  on<E extends keyof BrokerEvents>(event: E, listener: BrokerEvents[E]): void {
    this.events.on(event, listener);
  }

  async connect(): Promise<void> {
    this.clients.closing = false;
    for (let attempt = 0; ; attempt++) {
      try {
        await this.clients.open();
        // A Redis at maxmemory answers but takes no write: waited for like one that is down.
        await this.writes.waitForWrites();
        if (this.clients.closing) throw new BrokerError('closed while connecting');
        break;
      } catch (err) {
        if (this.clients.closing) throw new BrokerError('closed while connecting', { cause: err });
        const delay = Math.min(15_000, 200 * 2 ** attempt);
        this.opts.logger.warn(`broker connection failed, retrying in ${delay} ms`, {
          error: this.clients.takeLastError(coerceError(err).message),
        });
        await new Promise((r) => setTimeout(r, delay));
      }
    }
    this.clients.connected = true;
    const restoreMs =
      this.opts.restoreIntervalMs ?? Math.max(250, Math.min(10_000, (this.visibilityTimeoutSeconds * 1000) / 4));
    this.consumer.startTimers(restoreMs, this.opts.schedulerIntervalMs ?? 1000);
  }

  /** Celery declares `Queue(name, Exchange(name), routing_key=name)`: kombu records that binding. */
  async declareQueue(spec: QueueSpec): Promise<void> {
    await this.writes.write(() => this.transport.bind(spec.name, spec.name, spec.name));
  }

  /** The delayed set needs no declaration. */
  async declareDelayed(): Promise<void> {}

  /** kombu's Redis transport keeps fanout (and, for Celery's events, topic) exchanges on pub/sub, direct ones as binding sets. */
  async declareExchange(spec: ExchangeSpec): Promise<void> {
    this.exchanges.set(spec.name, spec);
    if (spec.kind !== 'direct') this.fanoutExchanges.add(spec.name);
  }

  async subscribe(exchange: string, spec: SubscriptionSpec, handler: DeliveryHandler): Promise<void> {
    const e = this.exchanges.get(exchange);
    if (!e && !this.fanoutExchanges.has(exchange)) {
      throw new BrokerError(`cannot subscribe to exchange ${exchange}: it was not declared`);
    }
    if (this.fanoutExchanges.has(exchange)) {
      const routingKey = e?.kind === 'fanout' ? '' : (spec.pattern ?? '');
      this.consumer.fanoutQueues.set(spec.queue, { exchange, routingKey });
    } else {
      await this.writes.write(() => this.transport.bind(exchange, spec.pattern ?? '', spec.queue));
    }
    await this.consume(spec.queue, handler, { noAck: true });
  }

  isConsuming(queue: string): boolean {
    return this.connected && this.consumer.isConsuming(queue);
  }

  async consume(queue: string, handler: DeliveryHandler, options: ConsumeOptions = {}): Promise<void> {
    const noAck = options.noAck ?? false;
    const entry: Consumer = { handler, noAck, prefetch: options.prefetch ?? 0 };
    this.consumer.consumers.set(queue, entry);
    const fan = this.consumer.fanoutQueues.get(queue);
    if (fan) {
      entry.unsubscribe = await this.fanout.subscribe(fan.exchange, fan.routingKey, (env, text, error) => {
        handler(
          new RedisDelivery(null, queue, { queue, text, deliveryTag: env?.deliveryTag ?? '', envelope: env, error }),
        );
      });
      return;
    }
    this.consumer.start(noAck);
  }

  async cancel(queue: string): Promise<void> {
    const entry = this.consumer.consumers.get(queue);
    this.consumer.consumers.delete(queue);
    await entry?.unsubscribe?.().catch(() => undefined);
  }

  async send(queue: string, m: OutgoingMessage): Promise<void> {
    await this.publish('', queue, m.body, m.properties);
  }

  async route(exchange: string, routingKey: string, m: OutgoingMessage): Promise<void> {
    await this.publish(exchange, routingKey, m.body, m.properties);
  }

  /** Into the delayed set, due `delayMs` from now; the schedulers of every worker move it back once due. */
  async sendLater(queue: string, m: OutgoingMessage, delayMs: number): Promise<void> {
    await this.publishAt('', queue, m.body, m.properties, Date.now() + Math.max(0, delayMs));
  }

  /**
   * The dead-letter queue on Redis is a list named like RabbitMQ's, holding the same copy and headers. A
   * message popped without its body is copied inside Redis, so its body never reaches the worker.
   */
  async deadLetter(delivery: Delivery, why: DeadLetterReason): Promise<void> {
    if (delivery instanceof RedisDelivery && delivery.raw.withheldBodyBytes !== undefined) {
      await this.declareQueue({ name: why.queue });
      const headers = deadLetterHeaders(delivery, why);
      if (
        !(await this.writes.write(() => this.transport.deadLetterWithheld(delivery.deliveryTag, why.queue, headers)))
      ) {
        throw new BrokerError(`could not dead-letter message ${delivery.deliveryTag}: it is no longer unacked`);
      }
      return;
    }
    await sendDeadLetter(
      {
        send: (queue, m) => this.publish('', queue, m.body, m.properties),
        declare: (queue) => this.declareQueue({ name: queue }),
      },
      delivery,
      why,
    );
  }

  settle(deliveries: readonly Delivery[], how: Settlement): void {
    settleEach(deliveries, how);
  }

  async take(queue: string, max: number, visit: (delivery: Delivery) => Promise<void>): Promise<void> {
    const taken: RedisDelivery[] = [];
    const settler: Settler = {
      settleByTag: (tag, what) =>
        void (what === 'requeue' ? this.transport.restore(tag, true) : this.transport.ack(tag)),
      owns: () => true,
    };
    // Each pop forgets the one before it, so a long walk leaves no pop requests behind (transport.ts popMany).
    let last: string | undefined;
    try {
      for (let i = 0; i < max; i++) {
        const id = randomUUID();
        const [p] = await this.transport.popMany([queue], 1, false, { id, ...(last ? { forget: last } : {}) });
        if (!p) break;
        last = id;
        const d = new RedisDelivery(settler, queue, p);
        taken.push(d);
        await visit(d);
      }
    } finally {
      // What the walk left unsettled goes back, in the order it was taken, to the front of the queue.
      for (const d of taken.reverse()) if (!d.settled) await this.transport.restore(d.deliveryTag);
      if (last) await this.cmd.del(this.keys.popRequest(last));
    }
  }

  lock(name: string): BrokerLock {
    const options = redisTarget(this.opts.url, this.opts.masterName, this.opts.tls).options;
    const connect = () => {
      const r = new (ioredis().Redis)({ ...options, connectionName: `lock ${name}` });
      r.on('error', () => undefined);
      return r;
    };
    return new RedisLeaseLock(connect, `${this.keys.prefix}${name}`, this.opts.logger, this.opts.lockLeaseMs);
  }

  listDelayed(queues: readonly string[], limit: number): Promise<ParkedMessage[]> {
    return listDelayed(this.transport, queues, limit);
  }

  purgeDelayed(queue?: string, options?: DelayedToolOptions): Promise<number> {
    return purgeDelayed(this.transport, queue, options);
  }

  releaseDelayed(queue?: string, options?: DelayedToolOptions): Promise<number> {
    return releaseDelayed(this.transport, queue, options);
  }

  backlog(): Promise<BrokerBacklog> {
    return backlog(this.cmd, this.keys, this.visibilityTimeoutSeconds);
  }

  delayedStats(): Promise<DelayLevelStats[]> {
    return delayedStats(this.cmd, this.keys);
  }

  /**
   * Every write of the publish path goes through `writes`: refused at maxmemory, it waits for Redis to take writes
   * and is sent again (write-block.ts). Fanout goes by PUBLISH, which Redis never refuses for memory.
   */
  private async publish(exchange: string, routingKey: string, body: Buffer, p: PublishProperties): Promise<void> {
    try {
      if (this.fanoutExchanges.has(exchange)) await this.fanout.publish(exchange, routingKey, body, p);
      else if ((await this.writes.write(() => this.transport.publish(exchange, routingKey, body, p))) === 0) {
        this.opts.logger.warn(
          `message to exchange ${exchange} with routing key ${routingKey} matched no queue (kombu drops it too)`,
        );
      }
    } catch (err) {
      throw new BrokerError('publish to redis failed', { cause: err });
    }
  }

  /** Publishes a message to become visible at `dueMs`: into the delayed set, unacked nowhere. */
  async publishAt(
    exchange: string,
    routingKey: string,
    body: Buffer,
    p: PublishProperties,
    dueMs: number,
  ): Promise<void> {
    await this.writes.write(() => this.transport.publishDelayed(exchange, routingKey, body, p, dueMs));
  }

  /**
   * Never hold a far ETA: moves a delivery's `unacked` entry into the delayed set, due `delayMs` from now,
   * in one script (scripts.ts DEFER), so it is never both waiting and unacked, nor in neither. A script
   * cut off mid-pipeline is sent again: a second run finds the tag gone and does nothing. Found gone at
   * once, the message was already restored to its queue (visibility timeout): it is no longer ours to defer.
   */
  async defer(delivery: Delivery, delayMs: number): Promise<void> {
    if (!(delivery instanceof RedisDelivery) || delivery.settled || !this.consumer.isUnsettled(delivery.deliveryTag)) {
      throw new BrokerError('only an unsettled delivery of this broker can be deferred');
    }
    const tag = delivery.deliveryTag;
    const dueMs = Date.now() + Math.max(0, delayMs);
    for (let attempt = 1; ; attempt++) {
      try {
        await this.writes.write(() => this.transport.defer(tag, dueMs));
        break;
      } catch (err) {
        if (attempt >= SETTLE_ATTEMPTS || this.clients.closing) {
          throw new BrokerError(`could not defer message ${tag}`, { cause: err });
        }
        await new Promise((r) => setTimeout(r, 100 * attempt));
      }
    }
    delivery.settled = true;
    this.consumer.settledElsewhere(tag);
  }

  /** Consumers are not visible in Redis: the count is of this process's consumers. */
  async inspectQueue(queue: string): Promise<QueueStats | null> {
    const [size, bound] = await Promise.all([this.transport.size(queue), this.cmd.exists(this.keys.binding(queue))]);
    if (size === 0 && bound === 0) return null;
    return { messageCount: size, consumerCount: this.consumer.consumers.has(queue) ? 1 : 0 };
  }

  async close(): Promise<void> {
    this.clients.closing = true;
    this.writes.stop();
    await this.consumer.stop();
    await this.clients.close();
  }
}
