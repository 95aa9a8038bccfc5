/**
 * The operator's tools for the delay levels (`celery_delayed_0` … `_27`): purge, or release (move back into
 * its queue now, body and properties unchanged, so the consuming worker holds it until the ETA it carries,
 * as Python workers do). A level queue cannot be read without taking its messages, so each level is walked
 * with `take`: a message of another queue is left unsettled and returns to its level when the walk ends.
 * The destination is the routing key after the 28 bit words (kombu's `calculate_routing_key`).
 */
import type { Broker, Delivery } from '../broker.js';
import { copyProperties } from '../republish.js';
import { DELAY_LEVELS } from './topology.js';

/** The queue a delay-level message is for: its routing key after the 28 bit words. */
export function delayedDestination(routingKey: string): string | null {
  const words = routingKey.split('.');
  if (words.length <= DELAY_LEVELS || !words.slice(0, DELAY_LEVELS).every((w) => w === '0' || w === '1')) return null;
  return words.slice(DELAY_LEVELS).join('.');
}

export async function actOnDelayLevels(
  broker: Pick<Broker, 'inspectQueue' | 'take' | 'send'>,
  action: 'purge' | 'release',
  queue?: string,
): Promise<number> {
  let acted = 0;
  for (let level = 0; level < DELAY_LEVELS; level++) {
    const name = `celery_delayed_${level}`;
    const stats = await broker.inspectQueue(name);
    if (!stats || stats.messageCount === 0) continue;
    await broker.take(name, stats.messageCount, async (d: Delivery) => {
      const to = delayedDestination(d.routingKey);
      if (to === null || (queue !== undefined && to !== queue)) return;
      if (action === 'release') await broker.send(to, { body: d.raw.body, properties: copyProperties(d.raw) });
      d.ack();
      acted++;
    });
  }
  return acted;
}
