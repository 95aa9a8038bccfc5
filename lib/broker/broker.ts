/**
 * The broker contract: what the worker, the publisher, remote control, the dead-letter tools and Beat ask of
 * a broker, as operations on queues and messages, never on a datastore's parts. RabbitMQ's exchanges,
 * `x-` arguments, delay levels and exclusive queues live in `amqp/`; a Redis transport implements the same
 * operations with lists, sorted sets and keys. `spec/support/broker-conformance.ts` proves an implementation
 * keeps this contract, and every implementation runs it unchanged.
 *
 * A message is the Celery message as it travels: body bytes plus properties (content type and encoding,
 * headers, correlation id, reply-to, priority, delivery mode). A broker carries it byte for byte.
 */
import type { PublishProperties } from '../protocol/encode.js';
import type { RawMessage } from '../protocol/types.js';

/** What a broker sends: the body and properties a Celery message carries. */
export interface OutgoingMessage {
  readonly body: Buffer;
  readonly properties: PublishProperties;
}

/** A message received from a queue, to be settled once: ack, reject, or requeue. */
export interface Delivery {
  readonly raw: RawMessage;
  /** The queue it was consumed from. */
  readonly queue: string;
  /** Where it was sent to (kombu's `delivery_info`): the exchange, '' for a queue by name. */
  readonly exchange: string;
  readonly routingKey: string;
  /** It was delivered before and not acked (a restored message, or one of a lost connection). */
  readonly redelivered: boolean;
  /**
   * False once the connection it came on is gone: the broker redelivers the message, so it must not run here
   * (Celery drops what it reserved from a dead connection). A noAck delivery has nothing to redeliver.
   */
  readonly live: boolean;
  /**
   * Set when the broker could not read the message's own envelope (Redis: the JSON kombu wraps it in), with
   * why: the message is refused for that reason, whatever its stand-in properties say.
   */
  readonly unreadable?: string;
  /** Settles at most once; a settle after its connection is gone is counted and logged (the broker redelivers). */
  ack(): void;
  /**
   * Resolves once the ack is with the broker (or given up on, and logged): an early-acked task starts only
   * then. Absent where the broker takes an ack as it is sent (AMQP, on the channel the message came on).
   */
  acked?(): Promise<void>;
  /** `requeue` true puts it back at the head of its queue (restore); false drops it (or the broker dead-letters it). */
  reject(requeue: boolean): void;
  readonly settled: boolean;
}

export type Settlement = 'ack' | 'reject' | 'requeue';

/** `Broker.settle` on every broker whose deliveries settle themselves: each one not yet settled, as `how` says. */
export function settleEach(deliveries: readonly Delivery[], how: Settlement): void {
  for (const d of deliveries) {
    if (d.settled) continue;
    if (how === 'ack') d.ack();
    else d.reject(how === 'requeue');
  }
}

/** What a task queue needs. Every broker tolerates a queue that already exists with other arguments. */
export interface QueueSpec {
  name: string;
  /**
   * Broker-specific arguments used only when the queue does not exist yet (AMQP `x-queue-type`,
   * `x-max-priority`); a broker that has none ignores them. An existing queue is never redeclared.
   */
  arguments?: Record<string, unknown>;
}

export interface QueueStats {
  /** Messages ready to deliver (not those delivered and unacked). */
  messageCount: number;
  consumerCount: number;
}

export type DeliveryHandler = (delivery: Delivery) => void;

export interface ConsumeOptions {
  /** At most this many unsettled deliveries at once (0 = unlimited). */
  prefetch?: number;
  /** The broker forgets each message as it delivers it: nothing to settle, nothing redelivered. */
  noAck?: boolean;
}

/** Why a message is dead-lettered, kept with the copy; `originalQueue` is the delivery's queue. */
export interface DeadLetterReason {
  /** The queue the copy goes to (Celery convention: `<queue>.dead_letter`, or the configured suffix). */
  queue: string;
  /** What went wrong, in words (bounded by the broker to 1,000 characters). */
  reason: string;
  /** The node that dead-lettered it. */
  by: string;
  /** Overrides the time of dead-lettering (tests). */
  at?: Date;
}

/** The headers a dead-letter copy carries, on every broker (named in lib/protocol/headers.ts). */
export { DEAD_LETTER_HEADER } from '../protocol/headers.js';

/**
 * A named exchange, in kombu's model (every kombu transport has the three kinds, Redis by key sets and
 * pub/sub): Celery's remote control (`celery.pidbox` fanout, `reply.celery.pidbox` direct) and its events
 * (`celeryev` topic).
 */
export interface ExchangeSpec {
  name: string;
  /** 'fanout': every subscriber gets every message; 'topic': by pattern; 'direct': by exact routing key. */
  kind: 'fanout' | 'topic' | 'direct';
  /** Survives a broker restart. */
  durable: boolean;
}

/** A subscriber's own queue on an exchange. */
export interface SubscriptionSpec {
  /** It receives what the exchange routes to it while it exists. */
  queue: string;
  /** Topic pattern (`#`, `task.*`) or direct routing key; '' for fanout. */
  pattern?: string;
  /** The queue is removed this long after its last consumer left. */
  expiresMs?: number;
  /** A message nobody took within this long is dropped. */
  messageTtlMs?: number;
}

/** How an AMQP broker keeps delayed messages (Celery 5.5's native delayed delivery). */
export type DelayQueueType = 'quorum' | 'classic';

/** What waits in a broker's native delay store: per level (AMQP) or bucket, and when it falls due. */
export interface DelayLevelStats {
  level: number;
  queue: string;
  messages: number;
  /** Upper bound, in seconds, on when a message of this level is delivered. */
  dueWithinSeconds: number;
}

/** How far a purge or release of parked messages has gone: `acted` of the `seen` looked at, of about `total`. */
export interface DelayedProgress {
  seen: number;
  acted: number;
  total: number;
}

export interface DelayedToolOptions {
  onProgress?: (p: DelayedProgress) => void;
  /** Aborted: stop taking more, settle what is in flight (a release acks only confirmed copies), then return. */
  signal?: AbortSignal;
}

/** What a broker that keeps its own bookkeeping of unacked and delayed messages (Redis) tells of them. */
export interface BrokerBacklog {
  visibilityTimeoutSeconds: number;
  /** Unacked messages delivered longer ago than the visibility timeout (their worker died; a worker restores them). */
  unackedOverdue: number;
  /** How long ago the oldest unacked message was delivered, ms; null when none is unacked. */
  oldestUnackedAgeMs: number | null;
  /** Messages in the delayed set, and when the earliest falls due (epoch ms; null when empty). */
  delayed: number;
  earliestDueAt: number | null;
}

/** A message parked in the native delay store, as `inspect scheduled` shows it. */
export interface ParkedMessage {
  /** The queue it goes back to when due. */
  readonly queue: string;
  readonly dueMs: number;
  readonly raw: RawMessage;
}

/** What this broker does itself; the worker does the rest. */
export interface BrokerCapabilities {
  /** `sendLater` holds messages in the broker (else the consuming worker holds them until due). */
  readonly nativeDelay: boolean;
  /** The finest delay `sendLater` keeps, in ms: a shorter wait is better held by the worker. */
  readonly delayResolutionMs: number;
  /** The longest delay `sendLater` accepts, in ms. */
  readonly maxDelayMs: number;
  /**
   * The longest a consumer may hold a message unsettled for an ETA before the broker gives it to another
   * (half of Redis's visibility timeout); absent: no limit. A longer wait is parked in the broker instead.
   */
  readonly maxHoldMs?: number;
  /** Queues can dead-letter rejected messages by themselves (AMQP `x-dead-letter-exchange`). */
  readonly deadLetterExchange: boolean;
  /** Messages of one queue are delivered in the order they were sent (when nothing is requeued). */
  readonly ordered: boolean;
  /**
   * `defer` moves a delivery into the delay store and settles it in one atomic step (Redis: one Lua script),
   * so it is never both waiting and unacked, nor in neither. Absent or false: a delivery is deferred by
   * `sendLater` (confirmed) and then acked, two steps, as AMQP must (a publish and an ack on a channel
   * cannot be one transaction); a crash between them runs the message twice, never loses it.
   */
  readonly atomicDefer?: boolean;
}

/** A lock held through the broker: one holder at a time, released when the holder dies (Beat's leadership). */
export interface BrokerLock {
  readonly name: string;
  readonly held: boolean;
  /** Takes the lock if nobody holds it; false when another holder does. */
  tryAcquire(): Promise<boolean>;
  release(): Promise<void>;
  /** The lock was lost without a release (connection gone): the holder must stop acting as holder. */
  on(event: 'lost', listener: () => void): this;
}

export interface BrokerEvents {
  connected: () => void;
  disconnected: (err: Error | undefined) => void;
  /** A connection attempt failed (at start or after a loss); `failures` counts them in a row since the last success. */
  connectFailed: (failures: number, err: Error) => void;
}

/**
 * The broker refuses what the worker publishes for now (RabbitMQ's `connection.blocked` under a memory or disk
 * alarm): publishes wait, nothing is renewed or sent again meanwhile, and consuming goes on.
 */
export interface BrokerBlock {
  /** The broker's words (RabbitMQ: `low on memory`, `low on disk`). */
  readonly reason: string;
  /** When it began (epoch ms). */
  readonly since: number;
}

export interface Broker {
  /** 'amqp', 'redis', 'memory': for logs and `inspect conf`. */
  readonly kind: string;
  readonly capabilities: BrokerCapabilities;

  /** Connects, retrying with backoff until it succeeds or `close` is called. */
  connect(): Promise<void>;
  readonly connected: boolean;
  on<E extends keyof BrokerEvents>(event: E, listener: BrokerEvents[E]): void;
  close(): Promise<void>;

  /**
   * Declares what a task queue needs (on AMQP its direct exchange and binding, and its delay route), again
   * after every reconnect; an existing queue is left as it is.
   */
  declareQueue(spec: QueueSpec): Promise<void>;
  /**
   * Prepares the native delay store (AMQP: Celery 5.5's delay levels, of `queueType` queues); idempotent,
   * again after every reconnect. Queues declared from then on also receive what is sent to them later.
   */
  declareDelayed(options?: { queueType?: DelayQueueType }): Promise<void>;
  /** Message and consumer counts of a queue, without consuming; null when it does not exist. */
  inspectQueue(queue: string): Promise<QueueStats | null>;

  /**
   * Sends to a queue; resolves once the broker has it (publisher confirms on AMQP). Fails with
   * `BROKER_UNROUTABLE` when the queue does not exist (AMQP's mandatory flag), so nothing vanishes unseen.
   */
  send(queue: string, message: OutgoingMessage): Promise<void>;
  /**
   * Sends through a named exchange with a routing key: a Celery route with an explicit `exchange`, a
   * remote-control reply, an event. '' is the default exchange, which routes by queue name.
   */
  route(exchange: string, routingKey: string, message: OutgoingMessage): Promise<void>;
  /**
   * Sends to `queue` so that it is delivered no earlier than `delayMs` from now (rounded up to the
   * broker's resolution). Only when `capabilities.nativeDelay`. The message is kept as given: callers go
   * through `sendLater` of `delayed.ts`, which decides (once, for every broker) that a per-message TTL
   * (`expiration`) is not kept, since Celery's `expires` header is what counts. A missing part of the broker's delay
   * structure is declared again and the send repeated, never dropped.
   */
  sendLater(queue: string, message: OutgoingMessage, delayMs: number): Promise<void>;
  /**
   * Only with `capabilities.atomicDefer`: moves an unsettled delivery, unchanged, into the delay store, due
   * `delayMs` from now, and settles it, in one step. Callers use `deferDelivery` of `delayed.ts`, which
   * falls back to `sendLater` then ack on every other broker.
   */
  defer?(delivery: Delivery, delayMs: number): Promise<void>;
  /**
   * Copies a delivery's exact bytes and properties to a dead-letter queue (declared if need be) with the
   * reason, its original queue, exchange and routing key, who and when, as `DEAD_LETTER_HEADER`. The
   * delivery itself is not settled: the caller settles it once the copy is confirmed.
   */
  deadLetter(delivery: Delivery, why: DeadLetterReason): Promise<void>;

  /** Starts consuming; the consumer is re-established after every reconnect. */
  consume(queue: string, handler: DeliveryHandler, options?: ConsumeOptions): Promise<void>;
  cancel(queue: string): Promise<void>;
  /** Whether the queue is consumed right now: false while disconnected, or after the broker cancelled it until it is restored. */
  isConsuming(queue: string): boolean;
  /**
   * Settles several deliveries at once (those already settled are skipped). 'requeue' restores them to
   * the head of their queue (kombu's restore), to be delivered again, marked redelivered.
   */
  settle(deliveries: readonly Delivery[], how: Settlement): void;
  /**
   * Takes up to `max` ready messages of a queue one by one, unsettled, handing each to `visit`; whatever
   * `visit` leaves unsettled goes back to the queue when the walk ends. For the dead-letter tools.
   */
  take(queue: string, max: number, visit: (delivery: Delivery) => Promise<void>): Promise<void>;

  /** Declares an exchange (idempotent, and again after every reconnect). */
  declareExchange(spec: ExchangeSpec): Promise<void>;
  /**
   * Subscribes `spec.queue` to an exchange (declaring the queue as the subscriber's own, transient) and
   * consumes it without acks: remote control, event monitors. Every subscriber of a fanout gets each message.
   */
  subscribe(exchange: string, spec: SubscriptionSpec, handler: DeliveryHandler): Promise<void>;
  /** What waits in the native delay store, without consuming it; [] when the broker has none. */
  delayedStats(): Promise<DelayLevelStats[]>;
  /** The first `limit` parked messages for any of `queues`, soonest due first, where the store can be read without consuming it (Redis). */
  listDelayed?(queues: readonly string[], limit: number): Promise<ParkedMessage[]>;
  /** Removes what is parked for a queue (for every queue when none); returns how many. */
  purgeDelayed?(queue?: string, options?: DelayedToolOptions): Promise<number>;
  /** Moves what is parked for a queue (every queue when none) back into it now, unchanged (ETA header kept); returns how many. */
  releaseDelayed?(queue?: string, options?: DelayedToolOptions): Promise<number>;

  /** Only brokers that keep unacked and delayed messages in their own structures (Redis); for `doctor`. */
  backlog?(): Promise<BrokerBacklog>;

  /** A named lock held through this broker's datastore (its own connection: it dies with its holder). */
  lock(name: string): BrokerLock;

  /** Settles that could not be sent because their connection had closed (each was logged). */
  readonly staleSettles: number;

  /** Set while the broker refuses publishes (a resource alarm); read without a call to the broker. */
  readonly blocked?: BrokerBlock | undefined;

  /** Stuck publish channels renewed since start, by a new channel or a new connection (RabbitMQ only). */
  readonly publishRenewals?: Readonly<Record<'channel' | 'connection', number>>;
}
