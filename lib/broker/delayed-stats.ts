/**
 * What waits in the delay topology, read with passive declares only (nothing is consumed or moved):
 * per level, how many messages, and the window in which they fall due. A message in level L has at most
 * 2^L s left in that level, plus at most 2^L − 1 s in the levels below it.
 */
import type { Broker } from './broker.js';
import { DELAY_LEVELS } from './topology.js';

export interface DelayLevelStats {
  level: number;
  queue: string;
  messages: number;
  /** Upper bound, in seconds, on when a message of this level is delivered. */
  dueWithinSeconds: number;
}

export async function delayedStats(broker: Broker): Promise<DelayLevelStats[]> {
  const out: DelayLevelStats[] = [];
  for (let level = 0; level < DELAY_LEVELS; level++) {
    const queue = `celery_delayed_${level}`;
    const stats = await broker.inspectQueue(queue);
    out.push({ level, queue, messages: stats?.messageCount ?? 0, dueWithinSeconds: 2 ** (level + 1) - 1 });
  }
  return out;
}

/** The next delivery is no later than the bound of the lowest non-empty level. */
export function nextDueWithinSeconds(levels: readonly DelayLevelStats[]): number | null {
  return levels.find((l) => l.messages > 0)?.dueWithinSeconds ?? null;
}

export function formatDuration(seconds: number): string {
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  if (seconds < 172_800) return `${Math.round(seconds / 3600)} h`;
  return `${Math.round(seconds / 86_400)} d`;
}
