/**
 * The delay canary's bookkeeping (lib/control/delay-canary.ts) on a fake broker and a fake clock: only the lock
 * holder sends; one canary of each level in flight; a canary not arrived past 2^L s + margin, or arriving that
 * late, marks its level late (logged once); the next in time clears it; a lost lock forgets what it measured.
 * And /healthz says "degraded" naming the late levels (lib/control/stall-watch.ts).
 */
import { EventEmitter } from 'node:events';
import type { BrokerLock, Delivery, DeliveryHandler, OutgoingMessage } from '../../lib/broker/broker.js';
import { DelayCanary } from '../../lib/control/delay-canary.js';
import { healthOf } from '../../lib/control/stall-watch.js';
import type { Logger } from '../../lib/logger.js';

class FakeLock extends EventEmitter implements BrokerLock {
  held = false;
  constructor(
    readonly name: string,
    private readonly free: () => boolean,
  ) {
    super();
  }
  async tryAcquire(): Promise<boolean> {
    this.held = this.free();
    return this.held;
  }
  async release(): Promise<void> {
    this.held = false;
  }
  lose(): void {
    this.held = false;
    this.emit('lost');
  }
}

function world(opts: { free?: boolean } = {}) {
  let now = 1_000_000;
  const sent: Array<{ queue: string; body: string; delayMs: number }> = [];
  const handlers = new Map<string, DeliveryHandler>();
  const logs: string[] = [];
  const lock = new FakeLock('l', () => opts.free ?? true);
  const broker = {
    connected: true,
    declareQueue: async () => undefined,
    sendLater: async (queue: string, m: OutgoingMessage, delayMs: number) =>
      void sent.push({ queue, body: m.body.toString(), delayMs }),
    consume: async (queue: string, h: DeliveryHandler) => void handlers.set(queue, h),
    cancel: async (queue: string) => void handlers.delete(queue),
    lock: () => lock,
  };
  const logger = {
    error: (m: string) => logs.push(`error ${m}`),
    warn: (m: string) => logs.push(`warn ${m}`),
    info: (m: string) => logs.push(`info ${m}`),
    debug: () => undefined,
    child: () => logger,
    isLevelEnabled: () => true,
  } as unknown as Logger;
  const canary = new DelayCanary(broker, logger, { intervalMs: 1000, marginMs: 5000, levels: [0, 3] }, () => now);
  const deliver = (body: string) =>
    handlers.get('celery_delay_canary')?.({ raw: { body: Buffer.from(body) } } as unknown as Delivery);
  return { canary, sent, logs, lock, deliver, advance: (ms: number) => (now += ms) };
}

test('only the lock holder sends, one canary per level in flight; in time, no level is late', async () => {
  const w = world();
  await w.canary.round();
  expect(w.canary.holder).toBe(true);
  expect(w.sent.map((s) => s.delayMs)).toEqual([1000, 8000]);
  await w.canary.round();
  expect(w.sent).toHaveLength(2);
  w.advance(1100);
  w.deliver(w.sent[0]!.body);
  expect(w.canary.lastTransitMs.get(0)).toBe(1100);
  await w.canary.round();
  expect(w.sent.map((s) => s.delayMs)).toEqual([1000, 8000, 1000]);
  expect(w.canary.lateLevels()).toEqual([]);

  const standby = world({ free: false });
  await standby.canary.round();
  expect([standby.canary.holder, standby.sent.length]).toEqual([false, 0]);
});

test('a canary not arrived past its bound + margin marks its level late (logged once); the next in time clears it', async () => {
  const w = world();
  await w.canary.round();
  w.advance(1000 + 5000 - 1);
  w.canary.checkOverdue();
  expect(w.canary.lateLevels()).toEqual([]);
  w.advance(2);
  w.canary.checkOverdue();
  w.advance(10_000);
  w.canary.checkOverdue();
  expect(w.canary.lateLevels().map((l) => l.level)).toEqual([0, 3]);
  expect(w.canary.lateLevels()[0]?.lateMs).toBe(1000 + 5000 + 10_001 - 1000);
  expect(w.logs.filter((l) => l.includes('delay level 0 is late'))).toHaveLength(1);
  // The stalled canary arrives at last (late: still late), then a fresh one arrives in time.
  w.deliver(w.sent[0]!.body);
  expect(w.canary.lateLevels().map((l) => l.level)).toEqual([0, 3]);
  await w.canary.round();
  const fresh = w.sent[w.sent.length - 1]!;
  expect(fresh.delayMs).toBe(1000);
  w.advance(1500);
  w.deliver(fresh.body);
  expect(w.canary.lateLevels().map((l) => l.level)).toEqual([3]);
  expect(w.logs.some((l) => l.includes('delay level 0 flows again'))).toBe(true);
});

test('a lost lock forgets the late levels and the canaries in flight (another replica measures now)', async () => {
  const w = world();
  await w.canary.round();
  w.advance(60_000);
  w.canary.checkOverdue();
  expect(w.canary.lateLevels()).toHaveLength(2);
  w.lock.lose();
  expect(w.canary.lateLevels()).toEqual([]);
  expect(w.canary.holder).toBe(false);
});

test('/healthz: 200 "degraded" naming the late delay levels; the event loop past its limit is still 503', () => {
  const base = { maxDelayMs: 10, livenessMs: 5000, lastStall: null, now: 0, degradedForMs: 60_000 };
  expect(healthOf({ ...base, lateDelayLevels: [] })).toEqual({ code: 200, body: 'ok\n' });
  expect(healthOf({ ...base, lateDelayLevels: [0] })).toEqual({
    code: 200,
    body: 'degraded: delay level 0 late (stalled?)\n',
  });
  expect(healthOf({ ...base, lateDelayLevels: [0, 3] })).toEqual({
    code: 200,
    body: 'degraded: delay levels 0, 3 late (stalled?)\n',
  });
  expect(healthOf({ ...base, maxDelayMs: 6000, lateDelayLevels: [0] }).code).toBe(503);
});
