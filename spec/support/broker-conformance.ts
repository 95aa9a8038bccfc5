/**
 * The broker contract (lib/broker/broker.ts) as tests: one suite that every implementation runs unchanged,
 * AMQP and in-memory today, Redis next (one line: `describeBrokerConformance('Redis', { create: ... })`).
 * Each test uses its own queue and exchange names; `remove` deletes them afterwards on a real server.
 */
import { randomUUID } from 'node:crypto';
import type { Broker, Delivery, OutgoingMessage } from '../../lib/broker/broker.js';
import { deferDelivery, sendLater } from '../../lib/broker/delayed.js';
import { waitFor } from './wait.js';

export interface BrokerFixture {
  /** A new client of the same datastore, not connected yet: two of them are two processes. */
  create(): Broker;
  /** Deletes the queues and exchanges a test declared (real servers are shared). */
  remove?(names: string[]): Promise<void>;
  /**
   * The client's connection is lost under it (the server closes it, a network blip) and the client comes
   * back by itself; resolves once it is connected again. Without it the crash test is skipped.
   */
  crash?(broker: Broker): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function message(
  text: string,
  headers: Record<string, unknown> = {},
  id: string = randomUUID(),
): OutgoingMessage {
  return {
    body: Buffer.from(text),
    properties: {
      contentType: 'application/json',
      contentEncoding: 'utf-8',
      headers: { id, ...headers },
      deliveryMode: 2,
      priority: 0,
      correlationId: id,
    },
  };
}

const text = (d: Delivery) => d.raw.body.toString('utf8');

export function describeBrokerConformance(name: string, fixture: BrokerFixture): void {
  describe(`the broker contract, on ${name}`, () => {
    let open: Broker[] = [];
    let names: string[] = [];
    const unique = (prefix: string) => {
      const n = `conf_${prefix}_${randomUUID().slice(0, 8)}`;
      names.push(n);
      return n;
    };
    const client = async () => {
      const b = fixture.create();
      open.push(b);
      await b.connect();
      return b;
    };
    /** A client, and a queue of the test's own with `n` messages waiting in it, their bodies '0' to `n - 1`. */
    const queueHolding = async (prefix: string, n: number) => {
      const b = await client();
      const q = unique(prefix);
      await b.declareQueue({ name: q });
      for (let i = 0; i < n; i++) await b.send(q, message(String(i)));
      return { b, q };
    };
    /**
     * A client with the delay store declared, consuming a queue of the test's own into an array with each
     * delivery's arrival time; none where the broker has no native delay.
     */
    const timedConsumer = async (prefix: string) => {
      const b = await client();
      if (!b.capabilities.nativeDelay) return undefined;
      await b.declareDelayed({ queueType: 'quorum' });
      const q = unique(prefix);
      await b.declareQueue({ name: q });
      const got: Array<{ d: Delivery; at: number }> = [];
      await b.consume(q, (d) => got.push({ d, at: Date.now() }));
      return { b, q, got };
    };
    /** Consumes `queue` into an array, never settling (the test settles). */
    const collect = async (b: Broker, queue: string, prefetch?: number) => {
      const got: Delivery[] = [];
      await b.consume(queue, (d) => got.push(d), prefetch === undefined ? {} : { prefetch });
      return got;
    };

    beforeEach(() => {
      open = [];
      names = [];
    });
    afterEach(async () => {
      for (const b of open) await b.close().catch(() => undefined);
      if (names.length > 0) await fixture.remove?.(names);
    });

    test('a queue is declared idempotently and inspected; a missing queue inspects as null', async () => {
      const b = await client();
      const q = unique('declare');
      expect(await b.inspectQueue(q)).toBeNull();
      await b.declareQueue({ name: q });
      await b.declareQueue({ name: q });
      await b.send(q, message('one'));
      const stats = await b.inspectQueue(q);
      expect(stats).toEqual({ messageCount: 1, consumerCount: 0 });
    });

    test('a message arrives byte for byte with its properties', async () => {
      const b = await client();
      const q = unique('bytes');
      await b.declareQueue({ name: q });
      const m = message('{"x": 1}', { task: 't.a', retries: 3 });
      const got = await collect(b, q);
      await b.send(q, { body: m.body, properties: { ...m.properties, replyTo: 'reply-here', priority: 5 } });
      await waitFor(() => got.length === 1, 15_000, { what: 'delivered' });
      const d = got[0]!;
      expect(d.raw.body.equals(m.body)).toBe(true);
      expect(d.queue).toBe(q);
      expect(d.redelivered).toBe(false);
      expect(d.live).toBe(true);
      expect(d.raw.properties).toMatchObject({
        contentType: 'application/json',
        contentEncoding: 'utf-8',
        correlationId: m.properties.correlationId,
        replyTo: 'reply-here',
        priority: 5,
      });
      expect(d.raw.properties.headers).toMatchObject({ task: 't.a', retries: 3 });
      d.ack();
      expect(d.settled).toBe(true);
    });

    test('messages of one queue arrive in the order they were sent, where the broker promises it', async () => {
      const b = await client();
      if (!b.capabilities.ordered) return;
      const q = unique('order');
      await b.declareQueue({ name: q });
      for (let i = 0; i < 50; i++) await b.send(q, message(String(i)));
      const got = await collect(b, q);
      await waitFor(() => got.length === 50, 15_000, { what: 'all delivered' });
      expect(got.map(text)).toEqual(Array.from({ length: 50 }, (_, i) => String(i)));
      b.settle(got, 'ack');
    });

    test('the prefetch is respected: no more unsettled deliveries than it allows, and one more per settle', async () => {
      const { b, q } = await queueHolding('prefetch', 10);
      const got = await collect(b, q, 3);
      await waitFor(() => got.length >= 3, 15_000, { what: 'three delivered' });
      await sleep(300);
      expect(got).toHaveLength(3);
      got[0]!.ack();
      await waitFor(() => got.length >= 4, 15_000, { what: 'a fourth delivered' });
      await sleep(300);
      expect(got).toHaveLength(4);
      b.settle(got, 'ack');
    });

    test('several deliveries settle at once; those already settled are skipped', async () => {
      const { b, q } = await queueHolding('many', 5);
      const got = await collect(b, q);
      await waitFor(() => got.length === 5, 15_000, { what: 'all delivered' });
      got[0]!.ack();
      b.settle(got, 'ack');
      expect(got.every((d) => d.settled)).toBe(true);
      await b.cancel(q);
      await b.close();
      const again = await client();
      const after = await collect(again, q);
      await sleep(400);
      expect(after).toHaveLength(0);
    });

    test('a requeued delivery comes back, marked redelivered; a rejected one does not', async () => {
      const b = await client();
      const q = unique('requeue');
      await b.declareQueue({ name: q });
      await b.send(q, message('back'));
      await b.send(q, message('gone'));
      const got = await collect(b, q);
      await waitFor(() => got.length === 2, 15_000, { what: 'both delivered' });
      const back = got.find((d) => text(d) === 'back')!;
      const gone = got.find((d) => text(d) === 'gone')!;
      gone.reject(false);
      back.reject(true);
      await waitFor(() => got.length === 3, 15_000, { what: 'redelivered' });
      expect(text(got[2]!)).toBe('back');
      expect(got[2]!.redelivered).toBe(true);
      got[2]!.ack();
      await sleep(300);
      expect(got).toHaveLength(3);
    });

    test('at least once: what a client received but never settled goes to another after the first closes', async () => {
      const { b: first, q } = await queueHolding('crash', 3);
      const got = await collect(first, q);
      await waitFor(() => got.length === 3, 15_000, { what: 'delivered to the first' });
      got[0]!.ack();
      await first.close();
      expect(got[1]!.live).toBe(false);
      const second = await client();
      const again = await collect(second, q);
      await waitFor(() => again.length === 2, 15_000, {
        what: () => `redelivered to the second: ${again.map(text).join()}`,
      });
      expect(again.map(text).sort()).toEqual(['1', '2']);
      expect(again.every((d) => d.redelivered)).toBe(true);
      second.settle(again, 'ack');
    });

    test('at least once: a connection lost under a client puts what it held unsettled back; the client consumes it again', async () => {
      if (!fixture.crash) return;
      const { b, q } = await queueHolding('lost', 3);
      const got = await collect(b, q);
      await waitFor(() => got.length === 3, 15_000, { what: 'delivered' });
      // None is acked before the loss: an ack in flight when a connection drops may or may not arrive.
      let disconnects = 0;
      b.on('disconnected', () => disconnects++);
      await fixture.crash(b);
      expect(disconnects).toBe(1);
      expect(got[1]!.live).toBe(false);
      // A settle on a lost connection is counted, never sent: the broker delivers the message again.
      const stale = b.staleSettles;
      got[1]!.ack();
      expect(b.staleSettles).toBe(stale + 1);
      await waitFor(() => got.length === 6, 20_000, { what: () => `redelivered: ${got.slice(3).map(text).join()}` });
      expect(got.slice(3).map(text).sort()).toEqual(['0', '1', '2']);
      expect(got.slice(3).every((d) => d.redelivered && d.live)).toBe(true);
      b.settle(got.slice(3), 'ack');
    });

    test('a delayed send is never delivered early, and is delivered', async () => {
      const consumer = await timedConsumer('later');
      if (!consumer) return;
      const { b, q, got } = consumer;
      const delayMs = 1500;
      const sentAt = Date.now();
      // Through delayed.ts, as every caller sends later: the per-message TTL that would drop it is not kept.
      await sendLater(
        b,
        q,
        { ...message('later'), properties: { ...message('later').properties, expiration: '100' } },
        delayMs,
      );
      await b.send(q, message('now'));
      await waitFor(() => got.length === 2, 20_000, { what: 'both delivered' });
      expect(text(got[0]!.d)).toBe('now');
      expect(text(got[1]!.d)).toBe('later');
      expect(got[1]!.at - sentAt).toBeGreaterThanOrEqual(delayMs);
      b.settle(
        got.map((g) => g.d),
        'ack',
      );
    });

    test('a queue declared while the delay store is being prepared, and a send later made meanwhile, are delivered', async () => {
      const b = await client();
      if (!b.capabilities.nativeDelay) return;
      const q = unique('beside');
      // As the worker starts: its queue declared and consumed beside the delay levels, not after them.
      const levels = b.declareDelayed({ queueType: 'quorum' });
      await b.declareQueue({ name: q });
      const got: Delivery[] = [];
      await b.consume(q, (d) => got.push(d));
      // 2 s (as the test above): through level 1 only, whatever waits in level 0 (other processes' 1 s waits).
      const sent = sendLater(b, q, message('later'), 1500);
      await Promise.all([levels, sent]);
      await waitFor(() => got.length === 1, 20_000, { what: 'delivered later' });
      expect(text(got[0]!)).toBe('later');
      b.settle(got, 'ack');
    });

    test('a deferred delivery is settled, comes back unchanged no earlier than its delay, and only once', async () => {
      const consumer = await timedConsumer('defer');
      if (!consumer) return;
      const { b, q, got } = consumer;
      await b.send(q, message('far', { keep: 'me' }));
      await waitFor(() => got.length === 1, 15_000, { what: 'first delivery' });
      const first = got[0]!.d;
      const delayMs = 1500;
      const deferredAt = Date.now();
      await deferDelivery(b, first, delayMs);
      expect(first.settled).toBe(true);
      await waitFor(() => got.length === 2, 20_000, { what: 'delivered again' });
      const again = got[1]!;
      expect(again.at - deferredAt).toBeGreaterThanOrEqual(delayMs - 50);
      expect(text(again.d)).toBe('far');
      expect(again.d.raw.properties.headers).toMatchObject({ keep: 'me' });
      b.settle([again.d], 'ack');
      await sleep(1500);
      expect(got).toHaveLength(2);
    });

    test('a dead-letter copy keeps the bytes, the reason and the original queue, and the original stays to be settled', async () => {
      const b = await client();
      const q = unique('dl');
      const dlq = `${q}.dead_letter`;
      names.push(dlq);
      await b.declareQueue({ name: q });
      const m = message('{"bad": true}', { task: 't.bad', keep: 'me' });
      await b.send(q, m);
      const got = await collect(b, q);
      await waitFor(() => got.length === 1, 15_000, { what: 'delivered' });
      await b.deadLetter(got[0]!, {
        queue: dlq,
        reason: 'ValueError: no',
        by: 'node@test',
        at: new Date('2026-12-01T09:00:00Z'),
      });
      expect(got[0]!.settled).toBe(false);
      got[0]!.ack();
      const copies = await collect(b, dlq);
      await waitFor(() => copies.length === 1, 15_000, { what: 'the copy arrives' });
      const c = copies[0]!;
      expect(c.raw.body.equals(m.body)).toBe(true);
      expect(c.raw.properties.correlationId).toBe(m.properties.correlationId);
      expect(c.raw.properties.headers).toMatchObject({
        task: 't.bad',
        keep: 'me',
        'x-dead-letter-reason': 'ValueError: no',
        'x-original-queue': q,
        'x-dead-lettered-by': 'node@test',
        'x-dead-lettered-at': '2026-12-01T09:00:00.000Z',
      });
      c.ack();
    });

    test('take hands over ready messages one by one; what is left unsettled goes back in place', async () => {
      const { b, q } = await queueHolding('take', 4);
      const seen: string[] = [];
      await b.take(q, 10, async (d) => {
        seen.push(text(d));
        if (text(d) === '1') d.ack();
      });
      expect(seen).toEqual(['0', '1', '2', '3']);
      const left: string[] = [];
      await b.take(q, 10, async (d) => void left.push(text(d)));
      expect(left.sort()).toEqual(['0', '2', '3']);
    });

    test('the lock has one holder at a time, and is free again once released', async () => {
      const a = await client();
      const b = await client();
      const lockName = unique('lock');
      const la = a.lock(lockName);
      const lb = b.lock(lockName);
      try {
        const [ga, gb] = [await la.tryAcquire(), await lb.tryAcquire()];
        expect([ga, gb]).toEqual([true, false]);
        expect(la.held).toBe(true);
        expect(lb.held).toBe(false);
        await la.release();
        expect(la.held).toBe(false);
        expect(await lb.tryAcquire()).toBe(true);
        expect(await la.tryAcquire()).toBe(false);
      } finally {
        await la.release();
        await lb.release();
      }
    });

    test('a fanout reaches every subscriber; a direct exchange routes by key', async () => {
      const fan = unique('fanout');
      const direct = unique('direct');
      const subs = await Promise.all([client(), client(), client()]);
      const got: string[][] = subs.map(() => []);
      for (const [i, s] of subs.entries()) {
        await s.declareExchange({ name: fan, kind: 'fanout', durable: false });
        await s.subscribe(
          fan,
          { queue: unique(`sub${i}`), expiresMs: 10_000, messageTtlMs: 60_000 },
          (d) => void got[i]!.push(text(d)),
        );
      }
      const sender = await client();
      await sender.declareExchange({ name: fan, kind: 'fanout', durable: false });
      await sender.route(fan, '', message('to all'));
      await waitFor(() => got.every((g) => g.length === 1), 15_000, { what: 'every subscriber got it' });
      expect(got).toEqual([['to all'], ['to all'], ['to all']]);

      await sender.declareExchange({ name: direct, kind: 'direct', durable: false });
      const replies: string[] = [];
      const rq = unique('reply');
      await subs[0].declareExchange({ name: direct, kind: 'direct', durable: false });
      await subs[0].subscribe(direct, { queue: rq, pattern: rq }, (d) => void replies.push(text(d)));
      await sender.route(direct, 'nobody', message('dropped'));
      await sender.route(direct, rq, message('for you'));
      await waitFor(() => replies.length === 1, 15_000, { what: 'the reply arrives' });
      await sleep(200);
      expect(replies).toEqual(['for you']);
    });

    test('a topic exchange delivers by pattern', async () => {
      const topic = unique('topic');
      const b = await client();
      await b.declareExchange({ name: topic, kind: 'topic', durable: true });
      const tasks: string[] = [];
      const all: string[] = [];
      await b.subscribe(topic, { queue: unique('tasks'), pattern: 'task.#' }, (d) => void tasks.push(text(d)));
      await b.subscribe(topic, { queue: unique('all'), pattern: '#' }, (d) => void all.push(text(d)));
      await b.route(topic, 'task.succeeded', message('t'));
      await b.route(topic, 'worker.heartbeat', message('w'));
      await waitFor(() => all.length === 2 && tasks.length === 1, 15_000, { what: 'delivered' });
      expect(tasks).toEqual(['t']);
      expect(all.sort()).toEqual(['t', 'w']);
    });

    test('a consumer is cancelled and says so; connected and close are honest', async () => {
      const b = await client();
      expect(b.connected).toBe(true);
      const q = unique('cancel');
      await b.declareQueue({ name: q });
      const got = await collect(b, q);
      expect(b.isConsuming(q)).toBe(true);
      await b.cancel(q);
      expect(b.isConsuming(q)).toBe(false);
      await b.send(q, message('after cancel'));
      await sleep(300);
      expect(got).toHaveLength(0);
      await b.close();
      expect(b.connected).toBe(false);
    });
  });
}
