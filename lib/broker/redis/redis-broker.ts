/**
 * The broker contract over Redis, in kombu's layout (see keys.ts and transport.ts): task queues are lists
 * consumed by one loop per ack mode (an atomic pop that can be resent, and when empty a wait that takes nothing), fanout exchanges are pub/sub.
 * Prefetch counts as kombu's QoS does: unsettled deliveries of this connection. Unacked messages stay in
 * Redis by tag, so acks survive reconnects; on close the unsettled ones are restored (kombu's
 * `restore_at_shutdown`), and every worker restores what passed the visibility timeout under kombu's mutex.
 */
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { Redis } from 'ioredis';
import { ioredis } from './ioredis.js';
import { BrokerError, coerceError } from '../../errors.js';
import type { Logger } from '../../logger.js';
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
import { RedisLeaseLock } from './lease-lock.js';
import { redisTarget } from './connection.js';
import type { TlsSettings } from '../../config/tls.js';
import { RedisDelivery, type Settler } from './delivery.js';
import { RedisFanout } from './fanout.js';
import { KombuKeys } from './keys.js';
import { KombuRedis, type Popped } from './transport.js';
import { listDelayed, purgeDelayed, releaseDelayed } from './delayed-store.js';

export interface RedisBrokerOptions {
  url: string;
  logger: Logger;
  /** kombu `visibility_timeout` (s): an unacked message older than this is restored to its queue. */
  visibilityTimeoutSeconds?: number;
  /** Waits up to this long are sent to the queue with their ETA instead of the delayed set (see DEFAULT_HOLD_MAX_MS). */
  holdMaxMs?: number;
  /** Lease of locks taken with `lock()` (Beat's), renewed every third of it. */
  lockLeaseMs?: number;
  /** kombu `master_name`, for sentinel:// URLs. */
  masterName?: string;
  /** kombu `global_keyprefix`. */
  keyPrefix?: string;
  /** Celery's `broker_use_ssl`, for rediss://. */
  tls?: TlsSettings;
  /** How often to look for messages past the visibility timeout, and for due delayed messages. */
  restoreIntervalMs?: number;
  schedulerIntervalMs?: number;
  /** Exchanges that are fanout even before a topology declares them (Celery's, as kombu's Redis sees them). */
  fanoutExchanges?: readonly string[];
  /** Bytes of message envelopes held unsettled at once (see DEFAULT_HELD_BYTES). */
  heldBytesMax?: number;
  /**
   * The body-size limit (SMARTER_WORKER_MAX_BODY_SIZE): a heavier body stays in Redis, the worker is sent the
   * message without it (and refuses it), and its dead-letter copy is made inside Redis. 0 or absent: no limit.
   */
  maxBodyBytes?: number;
}

interface Consumer {
  handler: DeliveryHandler;
  noAck: boolean;
  prefetch: number;
  unsubscribe?: () => Promise<void>;
}

/**
 * How long an idle loop waits on the first queue's list before it looks at every list again: a message on
 * another queue or a priority list is taken within this when the worker is idle (at once when it is busy).
 */
const WAIT_SECONDS = 0.25;
/** A settle that failed (its connection was cut mid-pipeline) is sent again this many times before it is left to the visibility timeout. */
const SETTLE_ATTEMPTS = 5;
/**
 * What the worker holds at once, whatever the messages weigh: the envelopes taken and not yet settled add
 * up to at most this many bytes, or are a single message when it alone is heavier (taken only when nothing
 * else is held). Without it a pop of 100 messages of 20 MB each would be held at once (the body-size limit
 * protects decoding, not the fetch).
 */
export const DEFAULT_HELD_BYTES = 16 * 1024 * 1024;
/** Buckets of `delayedStats`, as many as RabbitMQ's delay levels so both read alike. */
const STAT_LEVELS = 28;

/**
 * A wait shorter than this is not put in the delayed set: the message goes to its queue with its ETA, as
 * Celery sends it, and whichever worker takes it (a Python one too) holds it until due. Only our workers
 * move due messages out of the delayed set, so what only they can deliver is kept for waits worth it.
 */
export const DEFAULT_HOLD_MAX_MS = 5000;

const REDIS_CAPABILITIES: BrokerCapabilities = Object.freeze({
  nativeDelay: true,
  delayResolutionMs: DEFAULT_HOLD_MAX_MS,
  // RabbitMQ's delay range (2^28 − 1 s, about 8.5 years): an ETA beyond it is refused alike on either broker.
  maxDelayMs: (2 ** 28 - 1) * 1000,
  deadLetterExchange: false,
  ordered: true,
  atomicDefer: true,
});

export class RedisBroker implements Broker, Settler {
  readonly kind = 'redis';
  readonly capabilities: BrokerCapabilities;
  readonly keys: KombuKeys;
  private readonly cmd: Redis;
  private readonly blocking = new Map<boolean, Redis>();
  private readonly subscriber: Redis;
  private readonly transport: KombuRedis;
  private readonly fanout: RedisFanout;
  private readonly events = new EventEmitter();
  private readonly consumers = new Map<string, Consumer>();
  private readonly fanoutExchanges: Set<string>;
  /** Fanout queue → the exchange and routing key it is bound with. */
  private readonly fanoutQueues = new Map<string, { exchange: string; routingKey: string }>();
  private readonly loops = new Map<boolean, Promise<void>>();
  /** Unsettled deliveries: tag → queue and envelope size (kombu's QoS counts them per channel; we count per consumer). */
  private readonly unsettled = new Map<string, { queue: string; bytes: number }>();
  private heldBytes = 0;
  private readonly heldBytesMax: number;
  private readonly maxBodyBytes: number;
  private readonly exchanges = new Map<string, ExchangeSpec>();
  private readonly waiters = new Set<() => void>();
  /** Loop (by ack mode) → why its last pop failed; its queues are not consumed (readiness) until a pop succeeds. */
  private readonly failing = new Map<boolean, string>();
  private closing = false;
  private timers: NodeJS.Timeout[] = [];
  private cycle = 0;
  connected = false;
  /** Set while Redis refuses writes (maxmemory reached, `OOM command not allowed`). */
  blocked: BrokerBlock | undefined;
  staleSettles = 0;
  readonly visibilityTimeoutSeconds: number;
  private lastConnectionError: string | undefined;
  /** When the command connection was lost (undefined while connected), for the reconnect's log line. */
  private lostAt: number | undefined;
  /** ioredis reconnect attempts since the loss (`connectFailed` counts the failed ones). */
  private reconnects = 0;
  private failedInARow = 0;

  constructor(private readonly opts: RedisBrokerOptions) {
    const target = redisTarget(opts.url, opts.masterName, opts.tls);
    this.keys = new KombuKeys({ prefix: opts.keyPrefix ?? '', db: target.db });
    this.visibilityTimeoutSeconds = opts.visibilityTimeoutSeconds ?? 3600;
    this.heldBytesMax = opts.heldBytesMax ?? DEFAULT_HELD_BYTES;
    this.maxBodyBytes = opts.maxBodyBytes ?? 0;
    // Held past the visibility timeout, a message is restored and runs twice: hold at most half of it.
    const maxHoldMs = (this.visibilityTimeoutSeconds * 1000) / 2;
    const holdMs = Math.min(opts.holdMaxMs ?? DEFAULT_HOLD_MAX_MS, maxHoldMs);
    this.capabilities = Object.freeze({ ...REDIS_CAPABILITIES, delayResolutionMs: holdMs, maxHoldMs });
    if (maxHoldMs < DEFAULT_HOLD_MAX_MS) {
      opts.logger.warn(
        `visibility_timeout is ${this.visibilityTimeoutSeconds} s: ETAs are held at most ${maxHoldMs / 1000} s (half of it), longer waits go to the delayed set`,
      );
    }
    const make = (name: string) => {
      // Auto-pipelining sends the acks of many deliveries settled together in one round trip.
      const r = new (ioredis().Redis)({
        ...target.options,
        lazyConnect: true,
        connectionName: name,
        enableAutoPipelining: true,
      });
      // ioredis rejects a failed connect with "Connection is closed."; the cause (refused, untrusted certificate)
      // comes only as an error event, kept here so that the retry warning can say it.
      r.on('error', (err: Error) => void (this.lastConnectionError = err.message));
      return r;
    };
    this.cmd = make('smarter-worker');
    this.subscriber = make('smarter-worker (fanout)');
    this.blocking.set(false, make('smarter-worker (consume)'));
    this.blocking.set(true, make('smarter-worker (consume, no ack)'));
    this.transport = new KombuRedis(this.cmd, this.keys);
    this.fanout = new RedisFanout(this.cmd, this.subscriber, this.keys);
    this.fanoutExchanges = new Set(opts.fanoutExchanges ?? ['celery.pidbox', 'celeryev']);
    this.cmd.on('ready', () => {
      const was = this.connected;
      this.connected = true;
      if (this.lostAt !== undefined) {
        // Logged as the RabbitMQ broker logs it, so an outage reads the same on either broker.
        const awayMs = Date.now() - this.lostAt;
        this.lostAt = undefined;
        this.opts.logger.info(`broker connection restored after ${(awayMs / 1000).toFixed(1)} s away`, {
          away_ms: awayMs,
        });
      }
      if (!was) this.events.emit('connected');
      this.reconnects = 0;
      this.failedInARow = 0;
    });
    // ioredis retries by itself, at start and after a loss: each attempt means the one before failed, except the
    // first after a loss (the loss is not a failed attempt).
    this.cmd.on('reconnecting', () => {
      if (this.closing || this.connected) return;
      if (this.lostAt !== undefined && this.reconnects++ === 0) return;
      const err = new BrokerError(this.lastConnectionError ?? 'redis connection failed');
      this.events.emit('connectFailed', ++this.failedInARow, err);
    });
    this.cmd.on('close', () => {
      if (!this.connected) return;
      this.connected = false;
      if (this.closing) return;
      this.lostAt = Date.now();
      this.opts.logger.warn('broker connection lost; reconnecting', {
        error: this.lastConnectionError ?? 'connection closed',
      });
      this.events.emit('disconnected', new BrokerError('redis connection lost'));
    });
  }

  /** The primitives, for tools that read the delayed set or the dead-letter list. */
  get kombu(): KombuRedis {
    return this.transport;
  }

  on<E extends keyof BrokerEvents>(event: E, listener: BrokerEvents[E]): void {
    this.events.on(event, listener);
  }

  async connect(): Promise<void> {
    this.closing = false;
    for (let attempt = 0; ; attempt++) {
      try {
        await Promise.all(
          [this.cmd, this.subscriber, ...this.blocking.values()].map((r) =>
            r.status === 'wait' ? r.connect() : Promise.resolve(),
          ),
        );
        await this.cmd.ping();
        // A Redis at maxmemory answers but takes no write: waited for like one that is down. `SET … XX` on a key
        // that does not exist is refused when writes are, and writes nothing when they are not.
        await this.waitForWrites();
        if (this.closing) throw new BrokerError('closed while connecting');
        break;
      } catch (err) {
        if (this.closing) throw new BrokerError('closed while connecting', { cause: err });
        const delay = Math.min(15_000, 200 * 2 ** attempt);
        this.opts.logger.warn(`broker connection failed, retrying in ${delay} ms`, {
          error: this.lastConnectionError ?? coerceError(err).message,
        });
        this.lastConnectionError = undefined;
        await new Promise((r) => setTimeout(r, delay));
      }
    }
    this.connected = true;
    const restoreMs =
      this.opts.restoreIntervalMs ?? Math.max(250, Math.min(10_000, (this.visibilityTimeoutSeconds * 1000) / 4));
    this.timers.push(setInterval(() => void this.restoreVisible(), restoreMs));
    this.timers.push(setInterval(() => void this.moveDue(), this.opts.schedulerIntervalMs ?? 1000));
    for (const t of this.timers) t.unref();
  }

  /** Resolves once Redis takes writes (or the broker is closing); meanwhile the broker is blocked, retried with backoff. */
  private async waitForWrites(attempt = 0): Promise<void> {
    try {
      await this.cmd.set('_kombu.write-probe', '1', 'XX');
    } catch (err) {
      const message = coerceError(err).message;
      if (!/(^|\W)OOM command not allowed/.test(message)) throw err;
      if (!this.blocked) {
        this.blocked = { reason: message, since: Date.now() };
        this.opts.logger.warn(`broker blocked publishing (${message}): waiting for Redis to take writes`, {
          reason: message,
        });
      }
      const delay = Math.min(15_000, 200 * 2 ** Math.min(attempt, 10));
      await new Promise((r) => setTimeout(r, delay));
      if (!this.closing) await this.waitForWrites(attempt + 1);
      return;
    }
    if (this.blocked) {
      const ms = Date.now() - this.blocked.since;
      this.opts.logger.info(`broker unblocked after ${(ms / 1000).toFixed(1)} s blocked (${this.blocked.reason})`, {
        blocked_ms: ms,
      });
      this.blocked = undefined;
    }
  }

  private async restoreVisible(): Promise<void> {
    try {
      const n = await this.transport.restoreVisible(this.visibilityTimeoutSeconds);
      if (n) {
        this.opts.logger.warn(
          `restored ${n} message(s) unacked for longer than the visibility timeout (${this.visibilityTimeoutSeconds} s)`,
        );
      }
    } catch {
      /* retried at the next interval */
    }
  }

  private async moveDue(): Promise<void> {
    try {
      while ((await this.transport.moveDue()) > 0 && !this.closing) {
        /* move in batches until nothing is due */
      }
    } catch {
      /* retried at the next interval */
    }
  }

  /** Celery declares `Queue(name, Exchange(name), routing_key=name)`: kombu records that binding. */
  async declareQueue(spec: QueueSpec): Promise<void> {
    await this.transport.bind(spec.name, spec.name, spec.name);
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
      this.fanoutQueues.set(spec.queue, { exchange, routingKey: e?.kind === 'fanout' ? '' : (spec.pattern ?? '') });
    } else {
      await this.transport.bind(exchange, spec.pattern ?? '', spec.queue);
    }
    await this.consume(spec.queue, handler, { noAck: true });
  }

  isConsuming(queue: string): boolean {
    const c = this.consumers.get(queue);
    if (!this.connected || !c) return false;
    return this.fanoutQueues.has(queue) || !this.failing.has(c.noAck);
  }

  /** Logged at error once per cause (the loop retries every half second), and at info once it consumes again. */
  private consumeFailed(noAck: boolean, queues: readonly string[], err: unknown): void {
    const cause = coerceError(err).message;
    if (this.failing.get(noAck) !== cause) {
      this.opts.logger.error(`consuming from ${queues.join(', ')} failed: ${cause}; not ready, retrying every 0.5 s`, {
        error: cause,
      });
    }
    this.failing.set(noAck, cause);
  }

  private consumeOk(noAck: boolean, queues: readonly string[]): void {
    if (!this.failing.has(noAck)) return;
    this.failing.delete(noAck);
    this.opts.logger.info(`consuming again from ${queues.join(', ')}`);
  }

  async consume(queue: string, handler: DeliveryHandler, options: ConsumeOptions = {}): Promise<void> {
    const noAck = options.noAck ?? false;
    const entry: Consumer = { handler, noAck, prefetch: options.prefetch ?? 0 };
    this.consumers.set(queue, entry);
    const fan = this.fanoutQueues.get(queue);
    if (fan) {
      entry.unsubscribe = await this.fanout.subscribe(fan.exchange, fan.routingKey, (env, text, error) => {
        handler(
          new RedisDelivery(null, queue, { queue, text, deliveryTag: env?.deliveryTag ?? '', envelope: env, error }),
        );
      });
      return;
    }
    if (!this.loops.has(noAck)) this.loops.set(noAck, this.loop(noAck));
    this.wake();
  }

  async cancel(queue: string): Promise<void> {
    const entry = this.consumers.get(queue);
    this.consumers.delete(queue);
    await entry?.unsubscribe?.().catch(() => undefined);
  }

  private held(queue: string): number {
    let n = 0;
    for (const u of this.unsettled.values()) if (u.queue === queue) n++;
    return n;
  }

  /** The queues this loop may take from now: kombu's QoS `can_consume`, per consumer. */
  private listQueues(noAck: boolean): string[] {
    const qs = [...this.consumers]
      .filter(
        ([q, c]) =>
          c.noAck === noAck && !this.fanoutQueues.has(q) && (noAck || c.prefetch === 0 || this.held(q) < c.prefetch),
      )
      .map(([q]) => q);
    // kombu's round-robin queue cycle: start from a different queue each time.
    if (qs.length > 1) {
      const k = this.cycle++ % qs.length;
      return [...qs.slice(k), ...qs.slice(0, k)];
    }
    return qs;
  }

  private wake(): void {
    for (const w of this.waiters) w();
    this.waiters.clear();
  }

  private async idle(ms: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const t = setTimeout(done, ms);
      const waiters = this.waiters;
      function done() {
        clearTimeout(t);
        waiters.delete(done);
        resolve();
      }
      this.waiters.add(done);
    });
  }

  private async loop(noAck: boolean): Promise<void> {
    const blocking = this.blocking.get(noAck);
    if (!blocking) return;
    // A pop that failed is sent again under the same request, so a reply lost to a cut connection returns
    // the messages it took instead of leaving them in `unacked`; once received, the next pop forgets it.
    let pending: string | undefined;
    let forget: string | undefined;
    while (!this.closing) {
      const queues = this.listQueues(noAck);
      // The byte budget is spent: wait for a settle (which wakes this loop).
      if (queues.length === 0 || (!noAck && this.heldBytes >= this.heldBytesMax)) {
        await this.idle(1000);
        continue;
      }
      let batch: Popped[] = [];
      try {
        pending ??= randomUUID();
        const budget = noAck
          ? { bytes: this.heldBytesMax, alone: true }
          : {
              bytes: this.heldBytesMax - this.heldBytes,
              alone: this.unsettled.size === 0,
              withholdOver: this.maxBodyBytes,
            };
        const got = await this.transport.popBatch(
          queues,
          this.freeSlots(queues, noAck),
          noAck,
          { id: pending, ...(forget ? { forget } : {}) },
          budget,
        );
        batch = got.popped;
        this.consumeOk(noAck, queues);
        forget = batch.length > 0 ? pending : undefined;
        pending = undefined;
        // A message waits that the budget cannot take yet: wait for a settle rather than for the list.
        if (batch.length === 0 && got.full) await this.idle(1000);
        else if (batch.length === 0) await this.transport.waitReady(blocking, queues, WAIT_SECONDS);
      } catch (err) {
        if (this.closing) break;
        this.consumeFailed(noAck, queues, err);
        await this.idle(500);
        continue;
      }
      for (const popped of batch) await this.hand(popped, noAck);
    }
    // Received and handed: nothing will resend it. (A pop still pending at close keeps its key for its 600 s.)
    if (forget) await this.cmd.del(this.keys.popRequest(forget)).catch(() => undefined);
  }

  /** How many to take at once: the smallest free prefetch window among the queues (kombu's can_consume). */
  private freeSlots(queues: readonly string[], noAck: boolean): number {
    if (noAck) return 100;
    let free = 100;
    for (const q of queues) {
      const c = this.consumers.get(q);
      if (c && c.prefetch > 0) free = Math.min(free, c.prefetch - this.held(q));
    }
    return Math.max(1, free);
  }

  private async hand(popped: Popped, noAck: boolean): Promise<void> {
    if (this.closing) {
      // Taken while closing: back to the front of its queue, as kombu restores at shutdown.
      if (!noAck) await this.transport.restore(popped.deliveryTag).catch(() => undefined);
      return;
    }
    const consumer = this.consumers.get(popped.queue);
    if (!consumer) {
      // Cancelled while we waited: give the message back to the front of its queue.
      if (!noAck) await this.transport.restore(popped.deliveryTag).catch(() => undefined);
      return;
    }
    if (!noAck) this.hold(popped.deliveryTag, popped.queue, popped.text.length);
    consumer.handler(new RedisDelivery(noAck ? null : this, popped.queue, popped));
  }

  private hold(tag: string, queue: string, bytes: number): void {
    this.release(tag);
    this.unsettled.set(tag, { queue, bytes });
    this.heldBytes += bytes;
  }

  private release(tag: string): void {
    const u = this.unsettled.get(tag);
    if (!u) return;
    this.unsettled.delete(tag);
    this.heldBytes -= u.bytes;
  }

  owns(tag: string): boolean {
    return !this.closing || this.unsettled.has(tag);
  }

  /** Resolves once Redis has it, or once it is given up on (logged). */
  private settleTag(tag: string, what: 'ack' | 'requeue', attempt = 1): Promise<void> {
    const done = what === 'requeue' ? this.transport.restore(tag, true) : this.transport.ack(tag);
    return done.then(
      () => {
        this.release(tag);
        this.wake();
      },
      async (err: unknown) => {
        // Acks and restores by tag can be sent again; ioredis aborts those of a pipeline cut in the middle.
        if (attempt < SETTLE_ATTEMPTS && !this.closing) {
          await new Promise((r) => setTimeout(r, 100 * attempt));
          return this.settleTag(tag, what, attempt + 1);
        }
        this.release(tag);
        this.staleSettles++;
        this.opts.logger.warn(
          `could not ${what} message ${tag}: ${coerceError(err).message}; it is restored after the visibility timeout`,
        );
        this.wake();
      },
    );
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
      if (
        !(await this.transport.deadLetterWithheld(delivery.deliveryTag, why.queue, deadLetterHeaders(delivery, why)))
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

  settleByTag(tag: string, what: 'ack' | 'requeue' | 'drop'): Promise<void> {
    return this.settleTag(tag, what === 'requeue' ? 'requeue' : 'ack');
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

  /** The delayed set in buckets like RabbitMQ's delay levels: bucket L holds what is due within 2^(L+1) − 1 s. */
  async backlog(): Promise<BrokerBacklog> {
    const now = Date.now();
    // kombu scores unacked_index with time.time() (seconds); the delayed set is scored in ms.
    const [overdue, oldest, delayed, earliest] = await Promise.all([
      this.cmd.zcount(this.keys.unackedIndex, '-inf', now / 1000 - this.visibilityTimeoutSeconds),
      this.cmd.zrange(this.keys.unackedIndex, 0, 0, 'WITHSCORES'),
      this.cmd.zcard(this.keys.delayed),
      this.cmd.zrange(this.keys.delayed, 0, 0, 'WITHSCORES'),
    ]);
    return {
      visibilityTimeoutSeconds: this.visibilityTimeoutSeconds,
      unackedOverdue: overdue,
      oldestUnackedAgeMs: oldest[1] === undefined ? null : Math.max(0, now - Number(oldest[1]) * 1000),
      delayed,
      earliestDueAt: earliest[1] === undefined ? null : Number(earliest[1]),
    };
  }

  async delayedStats(): Promise<DelayLevelStats[]> {
    const now = Date.now();
    const p = this.cmd.pipeline();
    for (let level = 0; level < STAT_LEVELS; level++) {
      const lo = level === 0 ? '-inf' : `(${now + (2 ** level - 1) * 1000}`;
      p.zcount(this.keys.delayed, lo, level === STAT_LEVELS - 1 ? '+inf' : now + (2 ** (level + 1) - 1) * 1000);
    }
    const res = (await p.exec()) ?? [];
    return res.map(([, n], level) => ({
      level,
      queue: this.keys.delayed,
      messages: Number(n ?? 0),
      dueWithinSeconds: 2 ** (level + 1) - 1,
    }));
  }

  private async publish(exchange: string, routingKey: string, body: Buffer, p: PublishProperties): Promise<void> {
    try {
      if (this.fanoutExchanges.has(exchange)) await this.fanout.publish(exchange, routingKey, body, p);
      else if ((await this.transport.publish(exchange, routingKey, body, p)) === 0) {
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
    await this.transport.publishDelayed(exchange, routingKey, body, p, dueMs);
  }

  /**
   * Never hold a far ETA: moves a delivery's `unacked` entry into the delayed set, due `delayMs` from now,
   * in one script (scripts.ts DEFER), so it is never both waiting and unacked, nor in neither. A script
   * cut off mid-pipeline is sent again: a second run finds the tag gone and does nothing. Found gone at
   * once, the message was already restored to its queue (visibility timeout): it is no longer ours to defer.
   */
  async defer(delivery: Delivery, delayMs: number): Promise<void> {
    if (!(delivery instanceof RedisDelivery) || delivery.settled || !this.unsettled.has(delivery.deliveryTag)) {
      throw new BrokerError('only an unsettled delivery of this broker can be deferred');
    }
    const tag = delivery.deliveryTag;
    const dueMs = Date.now() + Math.max(0, delayMs);
    for (let attempt = 1; ; attempt++) {
      try {
        await this.transport.defer(tag, dueMs);
        break;
      } catch (err) {
        if (attempt >= SETTLE_ATTEMPTS || this.closing) {
          throw new BrokerError(`could not defer message ${tag}`, { cause: err });
        }
        await new Promise((r) => setTimeout(r, 100 * attempt));
      }
    }
    delivery.settled = true;
    this.release(tag);
    this.wake();
  }

  /** Consumers are not visible in Redis: the count is of this process's consumers. */
  async inspectQueue(queue: string): Promise<QueueStats | null> {
    const [size, bound] = await Promise.all([this.transport.size(queue), this.cmd.exists(this.keys.binding(queue))]);
    if (size === 0 && bound === 0) return null;
    return { messageCount: size, consumerCount: this.consumers.has(queue) ? 1 : 0 };
  }

  async close(): Promise<void> {
    this.closing = true;
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    this.wake();
    for (const [, c] of this.consumers) await c.unsubscribe?.().catch(() => undefined);
    this.consumers.clear();
    // The loops end within one wait.
    await Promise.allSettled(this.loops.values());
    for (const b of this.blocking.values()) b.disconnect();
    // kombu restore_at_shutdown: what this process took and did not settle goes back to the front.
    for (const tag of this.unsettled.keys()) await this.transport.restore(tag).catch(() => undefined);
    this.unsettled.clear();
    this.heldBytes = 0;
    this.connected = false;
    this.subscriber.disconnect();
    // QUIT on a connection that never became ready waits in ioredis's offline queue for ever.
    if (this.cmd.status === 'ready') await this.cmd.quit().catch(() => this.cmd.disconnect());
    else this.cmd.disconnect();
  }
}
