/**
 * The task message, decoded. One shape for protocol v1 and v2: a v1 body dict is converted as Celery's
 * `proto1_to_proto2` does. Celery's field names are kept (in camelCase) so the spec can be read beside it.
 */
import type { PyDateTime } from './values.js';

/** A Celery signature (`celery.canvas.Signature`) as it travels inside messages: a plain object. */
export interface Signature {
  task: string;
  args: unknown[];
  kwargs: Record<string, unknown>;
  options: Record<string, unknown>;
  subtask_type: string | null;
  immutable: boolean;
  [extra: string]: unknown;
}

export interface TaskMessage {
  protocol: 1 | 2;
  /** Task id; equals the `correlation_id` property. */
  id: string;
  /** Registered task name (`task` header, or the v1 body's `task`). */
  task: string;
  args: unknown[];
  kwargs: Record<string, unknown>;
  retries: number;
  /** When to run; null = now. A naive ISO value is read as UTC, as Celery does. */
  eta: PyDateTime | null;
  /** After this instant the task is revoked ('expired') instead of run. */
  expires: PyDateTime | null;
  /** `[hard, soft]` in seconds: Celery's order, whatever its protocol docs say. */
  timelimit: [number | null, number | null];
  rootId: string | null;
  parentId: string | null;
  group: string | null;
  groupIndex: number | null;
  shadow: string | null;
  origin: string | null;
  /** null = the header was absent: fall back to the task's own setting (Celery 5.6). */
  ignoreResult: boolean | null;
  argsrepr: string;
  kwargsrepr: string;
  replacedTaskNesting: number;
  stampedHeaders: string[] | null;
  stamps: Record<string, unknown>;
  /** Headers that are not part of the protocol; Celery re-sends them on retry. */
  customHeaders: Record<string, unknown>;
  callbacks: Signature[] | null;
  errbacks: Signature[] | null;
  /** Remaining chain, reversed: the next step is the last element. */
  chain: Signature[] | null;
  chord: Signature | null;
  /** AMQP properties. */
  correlationId: string;
  replyTo: string | null;
  priority: number;
}

/** What the broker hands the decoder; independent of any AMQP client library. */
export interface RawMessage {
  body: Buffer;
  /**
   * The body's size when the broker left it where it was because it is over the size limit: `body` is then
   * empty, and the decoder refuses the message before anything else (the broker keeps the bytes for the dead-letter copy).
   */
  withheldBodyBytes?: number;
  properties: {
    contentType?: string | undefined;
    contentEncoding?: string | undefined;
    correlationId?: string | undefined;
    replyTo?: string | undefined;
    priority?: number | undefined;
    deliveryMode?: number | undefined;
    expiration?: string | undefined;
    /** AMQP properties Celery never sets; kept so a message sent on unchanged keeps them. */
    messageId?: string | undefined;
    timestamp?: number | undefined;
    type?: string | undefined;
    appId?: string | undefined;
    userId?: string | undefined;
    headers?: unknown;
  };
}
