/**
 * A timer for any delay. Node caps `setTimeout` at 2^31−1 ms (24.8 days; a longer delay fires after 1 ms),
 * so a long wait is a chain of capped timers, each re-checking the due time: it never fires early.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

export interface LongTimer {
  clear(): void;
}

export function setLongTimeout(fn: () => void, delayMs: number, now: () => number = Date.now): LongTimer {
  const dueAt = now() + delayMs;
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    const left = dueAt - now();
    if (left <= 0) {
      timer = undefined;
      fn();
      return;
    }
    timer = setTimeout(arm, Math.min(left, MAX_TIMER_MS));
  };
  timer = setTimeout(arm, Math.min(Math.max(0, delayMs), MAX_TIMER_MS));
  return {
    clear() {
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
  };
}
