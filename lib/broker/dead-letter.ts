/**
 * `Broker.deadLetter`, the same on every broker: the dead-letter queue declared (once, where the broker
 * remembers it), the delivery's exact bytes and properties sent there with the reason headers
 * (`deadLetterHeaders`), and the queue declared again if it was deleted since: the copy must land before
 * the caller settles the original.
 */
import type { DeadLetterReason, Delivery, OutgoingMessage } from './broker.js';
import { copyProperties, deadLetterHeaders } from './republish.js';
import { sendOrDeclare } from './send-or-declare.js';

/** What a broker lends `sendDeadLetter`. */
export interface DeadLetterTarget {
  /** A confirmed send to a queue by name, failing with `BROKER_UNROUTABLE` when it does not exist (if the broker can tell). */
  send(queue: string, m: OutgoingMessage): Promise<void>;
  declare(queue: string): Promise<void>;
  /** Whether this dead-letter queue was declared already; absent: it is declared before every copy. */
  isDeclared?(queue: string): boolean;
}

/** The copy a dead-letter queue keeps of a delivery. */
export function deadLetterCopy(delivery: Delivery, why: DeadLetterReason): OutgoingMessage {
  return { body: delivery.raw.body, properties: copyProperties(delivery.raw, deadLetterHeaders(delivery, why)) };
}

export async function sendDeadLetter(to: DeadLetterTarget, delivery: Delivery, why: DeadLetterReason): Promise<void> {
  const { queue } = why;
  if (!to.isDeclared?.(queue)) await to.declare(queue);
  const copy = deadLetterCopy(delivery, why);
  await sendOrDeclare(
    () => to.send(queue, copy),
    () => to.declare(queue),
  );
}
