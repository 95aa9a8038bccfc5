/**
 * The renewal of a stuck publish channel (lib/broker/amqp/stuck-publish.ts, amqp-publish.ts): when nothing sent
 * on a channel is confirmed past a bound, a new channel, past a second bound a new connection; the publishes
 * still waiting go out again on the new channel and their callers hear its confirm.
 */
import { EventEmitter } from 'node:events';
import type { ConfirmChannel } from 'amqplib';
import { ConfirmPublisher } from '../../lib/broker/amqp/amqp-publish.js';
import { StuckPublishWatch } from '../../lib/broker/amqp/stuck-publish.js';
import type { PublishProperties } from '../../lib/protocol/encode.js';

const bounds = { channelMs: 1000, connectionMs: 3000 };

/** A watch on a clock the test sets (`at`), and `nackedAt`: a nack heard at that time. */
function watchAt(): { w: StuckPublishWatch; at: (ms: number) => void; nackedAt: (ms: number) => void } {
  let now = 0;
  const w = new StuckPublishWatch(bounds, () => now);
  const at = (ms: number) => void (now = ms);
  return {
    w,
    at,
    nackedAt: (ms) => {
      at(ms);
      w.nacked();
    },
  };
}

describe('StuckPublishWatch', () => {
  test('nacks for longer than the channel bound, no ack: a new channel; not before the bound', () => {
    const { w, at, nackedAt } = watchAt();
    nackedAt(100);
    nackedAt(1000);
    expect(w.check(undefined)).toBeUndefined();
    at(1101);
    expect(w.check(undefined)).toBe('channel');
  });

  test('an ack in between clears the trouble: nacks that alternate with acks renew nothing', () => {
    const { w, at, nackedAt } = watchAt();
    for (let t = 0; t < 10_000; t += 500) {
      nackedAt(t);
      at(t + 250);
      w.acked();
      expect(w.check(undefined)).toBeUndefined();
    }
  });

  test('a publish unconfirmed past the bound with no ack since it was sent: a new channel; one with acks after it: not', () => {
    const { w, at } = watchAt();
    at(10);
    expect(w.check(10)).toBeUndefined();
    at(1011);
    expect(w.check(10)).toBe('channel');
    const other = watchAt();
    other.at(10);
    other.w.acked();
    other.at(5000);
    other.w.acked();
    expect(other.w.check(10)).toBeUndefined();
  });

  test('after a block of the connection the wait is timed from its end: what waited through the block renews nothing', () => {
    const { w, at, nackedAt } = watchAt();
    nackedAt(0);
    at(20_000);
    w.restart();
    expect(w.check(5)).toBeUndefined();
    at(20_900);
    expect(w.check(5)).toBeUndefined();
    // Still nothing confirmed past the bound after the block: a stuck channel after all.
    at(21_001);
    expect(w.check(20_000)).toBe('channel');
  });

  test('still stuck on renewed channels past the connection bound: a new connection, then a fresh start', () => {
    const { w, at, nackedAt } = watchAt();
    nackedAt(0);
    at(1001);
    expect(w.check(undefined)).toBe('channel');
    w.renewed('channel');
    nackedAt(1100);
    at(2101);
    expect(w.check(undefined)).toBe('channel');
    w.renewed('channel');
    nackedAt(2200);
    at(3001);
    expect(w.check(undefined)).toBe('connection');
    w.renewed('connection');
    expect(w.check(undefined)).toBeUndefined();
    nackedAt(3100);
    at(4200);
    // After a new connection: a channel first again.
    expect(w.check(undefined)).toBe('channel');
  });
});

type Callback = (err: unknown) => void;
class FakeChannel extends EventEmitter {
  readonly sent: Array<{ routingKey: string; cb: Callback }> = [];
  publish(_exchange: string, routingKey: string, _body: Buffer, _options: unknown, cb: Callback): boolean {
    this.sent.push({ routingKey, cb });
    return true;
  }
}
const props: PublishProperties = {
  contentType: 'application/json',
  contentEncoding: 'utf-8',
  headers: {},
  deliveryMode: 2,
  priority: 0,
  passthrough: {},
} as unknown as PublishProperties;
const asConfirm = (c: FakeChannel) => c as unknown as ConfirmChannel;

describe('ConfirmPublisher on a renewed channel', () => {
  test("a renewed channel sends nothing again: what waits on the old one hears the old one's answer, new publishes go to the new one", async () => {
    const p = new ConfirmPublisher();
    const old = new FakeChannel();
    const waiting = p.publish(asConfirm(old), '', 'q', Buffer.from('a'), props, true);
    expect(p.waitingOn(asConfirm(old))).toBe(1);
    const fresh = new FakeChannel();
    const next = p.publish(asConfirm(fresh), '', 'q', Buffer.from('b'), props, true);
    let oldSettled = false;
    const settled = p.settledOn(asConfirm(old)).then(() => (oldSettled = true));
    for (const s of fresh.sent) s.cb(null);
    await next;
    expect(oldSettled).toBe(false);
    // The broker held it all along: confirmed late, on the old channel, and sent once.
    for (const s of old.sent) s.cb(null);
    await expect(waiting).resolves.toBeUndefined();
    await settled;
    expect(old.sent).toHaveLength(1);
    expect(fresh.sent).toHaveLength(1);
  });

  test("publishes waiting on a replaced connection's channels are sent again on the new one; the caller hears the new confirm, never the old channel's", async () => {
    const hooks = { acks: 0, nacks: 0 };
    const p = new ConfirmPublisher({ acked: () => void hooks.acks++, nacked: () => void hooks.nacks++ });
    const stuck = new FakeChannel();
    const sends = [
      p.publish(asConfirm(stuck), '', 'q', Buffer.from('a'), props, true),
      p.publish(asConfirm(stuck), '', 'q', Buffer.from('b'), props, true),
    ];
    expect(p.oldestUnconfirmed(asConfirm(stuck))).toEqual(expect.any(Number));
    expect(p.detachAll()).toBe(2);
    const fresh = new FakeChannel();
    for (const d of p.detached()) p.sendAgain(d, asConfirm(fresh));
    expect(p.oldestUnconfirmed(asConfirm(stuck))).toBeUndefined();
    // The old channel closes and fails what it had: ignored.
    for (const s of stuck.sent) s.cb(new Error('channel closed'));
    for (const s of fresh.sent) s.cb(null);
    await expect(Promise.all(sends)).resolves.toEqual([undefined, undefined]);
    expect(hooks).toEqual({ acks: 2, nacks: 0 });
  });

  test('a nack fails its publish (the caller decides) and is heard by the watch', async () => {
    let nacks = 0;
    const p = new ConfirmPublisher({ nacked: () => void nacks++ });
    const ch = new FakeChannel();
    const send = p.publish(asConfirm(ch), '', 'q', Buffer.from('a'), props);
    ch.sent[0]?.cb(new Error('nack'));
    await expect(send).rejects.toThrow('publish was not confirmed');
    expect(nacks).toBe(1);
  });

  test('a publish whose channel closes with its connection is in doubt: neither failed nor sent again until told', async () => {
    const p = new ConfirmPublisher();
    const ch = new FakeChannel();
    const lost = p.publish(asConfirm(ch), '', 'q', Buffer.from('a'), props);
    const held = p.publish(asConfirm(ch), '', 'q', Buffer.from('b'), props);
    let settled = 0;
    void lost.then(() => settled++);
    void held.then(() => settled++);
    for (const s of ch.sent) s.cb(new Error('channel closed'));
    await new Promise((r) => setImmediate(r));
    expect(settled).toBe(0);
    const [a, b] = p.detached();
    if (!a || !b) throw new Error('both are in doubt');
    const fresh = new FakeChannel();
    p.sendAgain(a, asConfirm(fresh));
    p.heldByBroker(b);
    expect(fresh.sent).toHaveLength(1);
    fresh.sent[0]?.cb(null);
    await expect(Promise.all([lost, held])).resolves.toEqual([undefined, undefined]);
  });

  test('a publish whose channel the broker closed with an error fails: sent again, it would fail again', async () => {
    const p = new ConfirmPublisher();
    const ch = new FakeChannel();
    p.watch(asConfirm(ch));
    const send = p.publish(asConfirm(ch), 'missing', 'q', Buffer.from('a'), props);
    ch.emit('error', new Error('NOT_FOUND - no exchange'));
    ch.sent[0]?.cb(new Error('channel closed'));
    await expect(send).rejects.toThrow('publish was not confirmed');
    expect(p.detached()).toEqual([]);
  });

  test('detached publishes fail when the broker closes before a new connection', async () => {
    const p = new ConfirmPublisher();
    const ch = new FakeChannel();
    const send = p.publish(asConfirm(ch), '', 'q', Buffer.from('a'), props);
    p.detachAll();
    p.failDetached(new Error('broker connection closed'));
    await expect(send).rejects.toThrow('broker connection closed');
  });
});
