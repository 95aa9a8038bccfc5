import { autoretryCountdown, buildRetryMessage, exponentialBackoff } from '../../lib/worker/run/retry.js';
import { decodeTaskMessage } from '../../lib/protocol/index.js';
import { loadFixture, rawFromFixture } from '../support/fixtures.js';

describe("Celery's backoff formula", () => {
  test.each([
    // factor, retries, maximum, expected without jitter
    [1, 0, 600, 1],
    [1, 1, 600, 2],
    [1, 2, 600, 4],
    [1, 10, 600, 600],
    [3, 2, 600, 12],
  ])('factor %d, retries %d, max %d → %d s', (factor, retries, max, expected) => {
    expect(exponentialBackoff(factor, retries, max, false)).toBe(expected);
  });

  test('full jitter draws randrange(countdown + 1): 0..countdown inclusive', () => {
    const seen: number[] = [];
    exponentialBackoff(1, 2, 600, true, (n) => {
      seen.push(n);
      return n - 1;
    });
    expect(seen).toEqual([5]);
    expect(exponentialBackoff(1, 2, 600, true, () => 0)).toBe(0);
  });

  test("Smarter's autoretry (retry_backoff=True, jitter) gives 0-1 s, 0-2 s, 0-4 s", () => {
    const policy = { autoretryFor: 'all' as const, retryBackoff: true, maxRetries: 3 };
    const upper = (retries: number) => autoretryCountdown(policy, retries, (n) => n - 1);
    expect([upper(0), upper(1), upper(2)]).toEqual([1, 2, 4]);
  });

  test('retry_backoff=False falls back to default_retry_delay (180 s)', () => {
    expect(autoretryCountdown({ retryBackoff: false }, 0)).toBe(180);
    expect(autoretryCountdown({ retryBackoff: false, defaultRetryDelay: 7 }, 0)).toBe(7);
  });

  test('a fractional factor is truncated after max(1, factor), as int(max(1.0, x))', () => {
    expect(autoretryCountdown({ retryBackoff: 2.7, retryJitter: false }, 1)).toBe(4);
    expect(autoretryCountdown({ retryBackoff: 0.5, retryJitter: false }, 1)).toBe(2);
  });
});

describe('the retry message', () => {
  test('keeps the id, increments retries, parent becomes self, drops x-death headers', () => {
    const msg = decodeTaskMessage(rawFromFixture(loadFixture('task-v2-options.json')), { accept: ['json'] });
    msg.customHeaders['x-death'] = [{ count: 1 }];
    const next = buildRetryMessage(msg, { etaMs: Date.parse('2026-11-30T00:00:05Z') });
    expect(next.id).toBe(msg.id);
    expect(next.retries).toBe(1);
    expect(next.parentId).toBe(msg.id);
    expect(next.rootId).toBe(msg.rootId);
    expect(next.eta?.iso).toBe('2026-11-30T00:00:05+00:00');
    expect(next.callbacks).toEqual(msg.callbacks);
    expect(next.timelimit).toEqual([30, 20]);
    expect(next.customHeaders).toEqual({ 'x-custom': 'v' });
    expect(next.replyTo).toBe(msg.replyTo);
    expect(next.priority).toBe(5);
  });
});
