/**
 * The broker behind a narrow interface: the worker and Beat depend only on this; one file imports amqplib.
 * A Redis transport (Smarter's current broker) can sit beside the AMQP one.
 */
import type { PublishProperties } from '../protocol/encode.js';
import type { RawMessage } from '../protocol/types.js';
import type { Topology } from './topology.js';

export interface Delivery {
  readonly raw: RawMessage;
  readonly queue: string;
  readonly exchange: string;
  readonly routingKey: string;
  readonly redelivered: boolean;
  /**
   * False once the channel it came on is gone: the broker redelivers the message, so it must not run here
   * (Celery drops what it reserved from a dead connection). A noAck delivery has nothing to redeliver.
   */
  readonly live: boolean;
  /** Settles at most once; a settle after its channel is gone is counted and logged (the broker redelivers). */
  ack(): void;
  reject(requeue: boolean): void;
  readonly settled: boolean;
}

/** A task queue as Celery declares it: durable, bound to a direct exchange of the same name. */
export interface QueueSpec {
  name: string;
  /** Arguments used only when the queue does not exist yet (an existing queue is never redeclared). */
  arguments?: Record<string, unknown>;
}

export interface QueueStats {
  messageCount: number;
  consumerCount: number;
}

export type DeliveryHandler = (delivery: Delivery) => void;

export interface BrokerEvents {
  connected: () => void;
  disconnected: (err: Error | undefined) => void;
}

export interface Broker {
  connect(): Promise<void>;
  /** Declares a task queue like Celery, tolerating an existing queue declared with other arguments. */
  declareTaskQueue(spec: QueueSpec): Promise<void>;
  /** Starts consuming; the consumer is re-established after every reconnect. */
  consume(queue: string, handler: DeliveryHandler, options?: { noAck?: boolean }): Promise<void>;
  cancel(queue: string): Promise<void>;
  /** Whether the queue is consumed right now: false while disconnected, or after the broker cancelled it until it is restored. */
  isConsuming(queue: string): boolean;
  /** Resolves once the broker confirmed the message (publisher confirms). */
  publish(exchange: string, routingKey: string, body: Buffer, properties: PublishProperties): Promise<void>;
  /** Prefetch of each consumer started from now on (0 = unlimited). */
  setPrefetch(count: number): Promise<void>;
  /**
   * Declares exchanges, queues and bindings, and again after every reconnect. A queue that already exists
   * is left as it is (a passive check first), so a differently declared one never closes the channel.
   */
  assertTopology(topology: Topology): Promise<void>;
  /** Message and consumer counts of a queue, without consuming; null when it does not exist. */
  inspectQueue(queue: string): Promise<QueueStats | null>;
  readonly connected: boolean;
  /** Settles that could not be sent because their channel had closed (each was logged). */
  readonly staleSettles: number;
  on<E extends keyof BrokerEvents>(event: E, listener: BrokerEvents[E]): void;
  close(): Promise<void>;
}
