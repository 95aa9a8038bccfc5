/**
 * What the worker, Beat and the tasks ask of tracing, apart from the SDK that does it (`otel.ts`) and the door
 * that loads it (`tracing.ts`): both sides import these types, neither imports the other for them.
 */
import type { Broker } from '../broker/broker.js';
import type { TaskMessage } from '../protocol/types.js';

/** How a run ended, as the worker's run reports it (`RunEnd`). */
export interface RunEnding {
  outcome: { kind: string };
  reason: string;
  /** The error a failed run raised. */
  error?: Error;
}

/** Attributes of a span, in OpenTelemetry's primitive types. */
export type SpanAttributes = Readonly<Record<string, string | number | boolean>>;

export interface Tracing {
  /**
   * Runs one task inside its `process` span: a child of the message's `receive` span (of the trace context the
   * message carries when the receive span is not known), linked to that context.
   */
  run<T extends RunEnding>(msg: TaskMessage, queue: string, fn: () => Promise<T>): Promise<T>;
  /**
   * The broker, with a `receive` span for each message its consumers take, and a `publish` span around each task
   * message it sends, whose context the message then carries.
   */
  broker(broker: Broker): Broker;
  /**
   * One call to an outside system that no maintained instrumentation covers (SMTP): a client span, child of the
   * run that makes it, with the error it raised.
   */
  client<T>(name: string, attributes: SpanAttributes, fn: () => Promise<T>): Promise<T>;
  /** Exports what is still buffered; the last thing a process does before it exits. */
  shutdown(): Promise<void>;
}
