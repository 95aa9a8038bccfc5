/** Reading `Broker.delayedStats()` for people: when the next delayed message is due, in words. */
import type { DelayLevelStats } from './broker.js';

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
