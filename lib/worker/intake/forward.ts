/**
 * What the worker does with a task name it does not implement: reject it as Celery does (the default), or,
 * during a migration, forward it unchanged to the queue of the workers that still implement it (Smarter's
 * Python workers). A forwarded message carries a header naming who forwarded it; a message that comes back
 * with that header is never forwarded again (a loop: the fallback queue is served by a worker that forwards
 * too) and goes to the dead-letter queue instead.
 */
import type { Broker, Delivery } from '../../broker/broker.js';
import { headersOf, republishProperties } from '../../broker/republish.js';
import { sendOrDeclare } from '../../broker/send-or-declare.js';
import { coerceError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { FORWARDED_BY_HEADER, FORWARDED_FROM_HEADER } from '../../protocol/headers.js';

export type UnknownTaskPolicy = { mode: 'reject' } | { mode: 'forward'; queue: string };

/** Set on every message we forward: the node that forwarded it and the queue it came from. */
export { FORWARDED_BY_HEADER, FORWARDED_FROM_HEADER };

/** Parses `reject` or `forward:<queue>` (SMARTER_WORKER_UNKNOWN_TASKS); throws with what was expected. */
export function parseUnknownTaskPolicy(text: string): UnknownTaskPolicy {
  const t = text.trim();
  if (t.toLowerCase() === 'reject') return { mode: 'reject' };
  const m = /^forward:(.+)$/i.exec(t);
  const queue = m?.[1]?.trim();
  if (queue) return { mode: 'forward', queue };
  throw new Error('expected reject or forward:<queue>');
}

export function describeUnknownTaskPolicy(p: UnknownTaskPolicy): string {
  return p.mode === 'reject' ? 'reject' : `forward:${p.queue}`;
}

export type ForwardResult =
  | { kind: 'forwarded' }
  /** Not forwarded: the reason goes with the message to the dead-letter queue. */
  | { kind: 'loop'; reason: string }
  /** The forward was not confirmed: the message must stay where it is. */
  | { kind: 'unpublished'; reason: string };

function headerText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (Buffer.isBuffer(v)) return v.toString();
  return JSON.stringify(v) ?? 'unknown';
}

/** Distinct task names remembered (counted, logged once): whoever can publish can invent names without end. */
export const FORWARD_NAMES_MAX = 1000;
const OTHER_NAMES = '(other task names)';

export class Forwarder {
  /** Messages forwarded, by `task` and target queue; past FORWARD_NAMES_MAX names, the rest under one key. */
  readonly counts = new Map<string, number>();
  private readonly logged = new Set<string>();
  private declared = false;

  constructor(
    private readonly broker: Broker,
    readonly queue: string,
    private readonly nodeName: string,
    private readonly logger: Logger,
    private readonly onForwarded: (task: string, to: string) => void = () => undefined,
  ) {}

  async forward(delivery: Delivery, task: string): Promise<ForwardResult> {
    const headers = headersOf(delivery.raw);
    const by = headers[FORWARDED_BY_HEADER];
    if (by !== undefined) {
      const from = headerText(headers[FORWARDED_FROM_HEADER]);
      return {
        kind: 'loop',
        reason: `forwarding loop: ${task} was already forwarded by ${headerText(by)} from ${from} and came back on ${delivery.queue}; no worker there implements it`,
      };
    }
    try {
      // Declared first, as Celery declares the queues it sends to (an existing queue is left as it is).
      if (!this.declared) {
        await this.broker.declareQueue({ name: this.queue });
        this.declared = true;
      }
      const props = republishProperties(delivery.raw, {
        add: { [FORWARDED_BY_HEADER]: this.nodeName, [FORWARDED_FROM_HEADER]: delivery.queue },
        keepExpiration: true,
      });
      const message = { body: delivery.raw.body, properties: props };
      // Deleted since: declared again (the mandatory send said so instead of dropping the message).
      await sendOrDeclare(
        () => this.broker.send(this.queue, message),
        () => this.broker.declareQueue({ name: this.queue }),
      );
    } catch (err) {
      return { kind: 'unpublished', reason: `could not forward ${task} to ${this.queue}: ${coerceError(err).message}` };
    }
    const known = this.counts.has(`${task}\0${this.queue}`) || this.counts.size < FORWARD_NAMES_MAX;
    const key = `${known ? task : OTHER_NAMES}\0${this.queue}`;
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    this.onForwarded(task, this.queue);
    if (known && !this.logged.has(task)) {
      this.logged.add(task);
      this.logger.info(
        `forwarding task ${task}, which this worker does not implement, from ${delivery.queue} to ${this.queue}`,
        {
          task,
          queue: delivery.queue,
          forwarded_to: this.queue,
        },
      );
    }
    return { kind: 'forwarded' };
  }
}
