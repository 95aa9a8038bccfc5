/**
 * Celery's per-task rate limits (`rate_limit = "10/m"`): one token bucket per task name per worker, of
 * capacity 1 (celery/worker/consumer/consumer.py). A task without a token waits in the worker, unacked.
 */

/** Celery `celery.utils.time.rate`: "N", "N/s", "N/m" or "N/h" in tasks per second; 0 or empty = none. */
export function parseRate(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(?:\/\s*([smh]))?\s*$/.exec(text);
  if (!m) throw new Error(`Invalid rate limit string: ${JSON.stringify(text)}`);
  const n = Number(m[1]);
  const per = m[2] === 'm' ? 60 : m[2] === 'h' ? 3600 : 1;
  return n / per;
}

export class TokenBucket {
  private tokens = 1;
  private last: number;
  constructor(
    private readonly perSecond: number,
    now: number = Date.now(),
  ) {
    this.last = now;
  }

  /** Takes a token and returns 0, or returns how many ms until one is available. */
  take(now: number = Date.now()): number {
    this.tokens = Math.min(1, this.tokens + ((now - this.last) / 1000) * this.perSecond);
    this.last = now;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return 0;
    }
    return Math.ceil(((1 - this.tokens) / this.perSecond) * 1000);
  }
}
