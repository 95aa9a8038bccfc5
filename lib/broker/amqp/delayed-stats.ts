/**
 * What waits in the delay topology, read with passive declares only (nothing is consumed or moved):
 * per level, how many messages, and the window in which they fall due. A message in level L has at most
 * 2^L s left in that level, plus at most 2^L − 1 s in the levels below it.
 */
import type { Broker, DelayLevelStats } from '../broker.js';
import { DELAY_LEVELS } from './topology.js';

export async function delayedStats(broker: Pick<Broker, 'inspectQueue'>): Promise<DelayLevelStats[]> {
  const out: DelayLevelStats[] = [];
  for (let level = 0; level < DELAY_LEVELS; level++) {
    const queue = `celery_delayed_${level}`;
    const stats = await broker.inspectQueue(queue);
    out.push({ level, queue, messages: stats?.messageCount ?? 0, dueWithinSeconds: 2 ** (level + 1) - 1 });
  }
  return out;
}
