/**
 * kombu's Redis transport as primitives over one ioredis connection: publish (LPUSH, or through the
 * bindings of a named exchange), pop with kombu's priority order into `unacked`/`unacked_index`, ack,
 * reject, restore by tag and of everything past the visibility timeout (under kombu's `unacked_mutex`, so
 * Python workers and ours never restore one message twice), and our delayed set. The broker contract is
 * built on these; nothing else talks to Redis lists.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { PublishProperties } from '../../protocol/encode.js';
import { type Envelope, decodeEnvelope, encodeEnvelope } from './envelope.js';
import { KombuKeys, PRIORITY_STEPS, messagePriority } from './keys.js';
import {
  ACK_MANY,
  DEAD_LETTER_WITHHELD,
  DEFER,
  MOVE_DUE,
  POP,
  PUBLISH_BOUND,
  RELEASE_IF_HELD,
  RESTORE,
} from './scripts.js';
import { stringifyKombuJson } from '../../protocol/json.js';

export interface Popped {
  queue: string;
  /** The envelope as stored: kept so a message that does not decode can still be dead-lettered whole. */
  text: string;
  deliveryTag: string;
  envelope: Envelope | null;
  error: Error | null;
  /** The body's size when the pop left the body in Redis (over `PopBudget.withholdOver`): `text` has an empty body. */
  withheld?: number;
}

/** kombu's defaults: `unacked_mutex_expire` 300 s. */
export const UNACKED_MUTEX_EXPIRE_S = 300;

/** How long what a pop took is kept for a resend of it: far longer than any reconnect, and it is forgotten at the next pop anyway. */
const POP_REQUEST_TTL_S = 600;

/** A pop that may be sent again with the same `id` (scripts.ts POP); `forget` is the previous pop of the same loop, now received. */
export interface PopRequest {
  id: string;
  forget?: string;
}

/** How many bytes of envelopes one pop may return, and whether its first may be heavier (nothing else is held). */
export interface PopBudget {
  bytes: number;
  alone: boolean;
  /** Bodies heavier than this (decoded bytes) stay in Redis: their message comes without its body (0 or absent: all come whole). */
  withholdOver?: number;
}

const UNBOUNDED: PopBudget = { bytes: Number.MAX_SAFE_INTEGER, alone: true };

const POP_SCRIPTS = new Map<number, ReturnType<typeof POP>>();
const popScript = (lists: number) => {
  let s = POP_SCRIPTS.get(lists);
  if (!s) POP_SCRIPTS.set(lists, (s = POP(lists)));
  return s;
};

function toPopped(keys: KombuKeys, list: string, text: string, tag: string, withheld: string): Popped {
  let envelope: Envelope | null = null;
  let error: Error | null = null;
  const size = withheld === '' ? undefined : Number(withheld);
  try {
    envelope = decodeEnvelope(text);
    if (size !== undefined) envelope.raw.withheldBodyBytes = size;
  } catch (err) {
    error = err as Error;
  }
  return {
    queue: keys.queueOfList(list),
    text,
    deliveryTag: tag,
    envelope,
    error,
    ...(size !== undefined ? { withheld: size } : {}),
  };
}

export class KombuRedis {
  constructor(
    readonly redis: Redis,
    readonly keys: KombuKeys,
  ) {}

  /** kombu `basic_publish`: the anonymous exchange puts to the queue named by the key, others go through their bindings. Returns the number of queues reached. */
  async publish(exchange: string, routingKey: string, body: Buffer, properties: PublishProperties): Promise<number> {
    const { text } = encodeEnvelope(body, properties, exchange, routingKey);
    return this.publishText(exchange, routingKey, text, properties.priority);
  }

  async publishText(exchange: string, routingKey: string, text: string, priority: unknown): Promise<number> {
    if (!exchange) {
      await this.redis.lpush(this.keys.queue(routingKey, messagePriority(priority)), text);
      return 1;
    }
    return Number(
      await PUBLISH_BOUND.run(
        this.redis,
        [],
        [this.keys.prefix, exchange, routingKey, messagePriority(priority), text],
      ),
    );
  }

  /** kombu `_queue_bind`: a member `routing_key\x06\x16pattern\x06\x16queue` of `_kombu.binding.<exchange>`. */
  async bind(exchange: string, routingKey: string, queue: string): Promise<void> {
    await this.redis.sadd(this.keys.binding(exchange), KombuKeys.bindingMember(routingKey, queue));
  }

  /** The lists to pop, kombu's `_brpop_start` order: every queue at priority 0, then at 3, 6, 9. */
  listsOf(queues: readonly string[]): string[] {
    return PRIORITY_STEPS.flatMap((s) => queues.map((q) => this.keys.queue(q, s)));
  }

  /** Takes the next message without blocking and records it unacked in the same step (unless noAck). */
  async pop(queues: readonly string[], noAck = false): Promise<Popped | null> {
    return (await this.popMany(queues, 1, noAck))[0] ?? null;
  }

  /**
   * Takes up to `max` messages in one script (kombu's order), each recorded unacked in the same step. With
   * a request, sending it again after an error (its reply may have been lost) returns what it took. What it
   * returns weighs at most `budget.bytes` (of envelope text), or is one message when `budget.alone`.
   */
  async popMany(
    queues: readonly string[],
    max: number,
    noAck = false,
    request: PopRequest = { id: randomUUID() },
    budget: PopBudget = UNBOUNDED,
  ): Promise<Popped[]> {
    return (await this.popBatch(queues, max, noAck, request, budget)).popped;
  }

  /** `popMany`, saying also whether the byte budget stopped it before a message waiting in a list (`full`). */
  async popBatch(
    queues: readonly string[],
    max: number,
    noAck = false,
    request: PopRequest = { id: randomUUID() },
    budget: PopBudget = UNBOUNDED,
  ): Promise<{ popped: Popped[]; full: boolean }> {
    if (queues.length === 0 || max < 1) return { popped: [], full: false };
    const lists = this.listsOf(queues);
    const key = this.keys.popRequest(request.id);
    const res = await popScript(lists.length).run(
      this.redis,
      [
        this.keys.unacked,
        this.keys.unackedIndex,
        key,
        request.forget ? this.keys.popRequest(request.forget) : key,
        ...lists,
      ],
      [
        Date.now() / 1000,
        `${randomUUID()}-`,
        noAck ? 1 : 0,
        max,
        POP_REQUEST_TTL_S,
        Math.max(0, Math.floor(budget.bytes)),
        budget.alone ? 1 : 0,
        Math.max(0, Math.floor(budget.withholdOver ?? 0)),
      ],
    );
    if (!Array.isArray(res)) return { popped: [], full: false };
    const out: Popped[] = [];
    const flat = res as string[];
    for (let i = 0; i + 3 < flat.length; i += 4) {
      out.push(toPopped(this.keys, flat[i] ?? '', flat[i + 1] ?? '', flat[i + 2] ?? '', String(flat[i + 3] ?? '')));
    }
    return { popped: out, full: flat.length % 4 === 1 && flat[flat.length - 1] === 'full' };
  }

  /**
   * Waits up to `timeoutS` for the first queue's list to hold a message, on a connection of its own (it
   * blocks), without taking it: BLMOVE of a list onto its own tail moves nothing, so a reply lost to a cut
   * connection loses nothing, where kombu's BRPOP loses the message it popped. The caller then takes with
   * `popMany`; the other lists are looked at each time the wait ends. `blocking` must use the same server and database.
   */
  async waitReady(blocking: Redis, queues: readonly string[], timeoutS: number): Promise<void> {
    const first = queues[0];
    if (first === undefined) return;
    const list = this.keys.queue(first, 0);
    await blocking.blmove(list, list, 'RIGHT', 'RIGHT', timeoutS);
  }

  async ack(tag: string): Promise<boolean> {
    return (await this.ackMany([tag])) === 1;
  }

  /** `ack` of several tags in one script. Returns how many were still unacked. */
  async ackMany(tags: readonly string[]): Promise<number> {
    return Number(await ACK_MANY.run(this.redis, [this.keys.unacked, this.keys.unackedIndex], tags));
  }

  /** kombu `restore_by_tag`: back on its queue marked redelivered; `leftmost` puts it at the back (reject with requeue). */
  async restore(tag: string, leftmost = false): Promise<number> {
    return Number(
      await RESTORE.run(
        this.redis,
        [this.keys.unacked, this.keys.unackedIndex, this.keys.unroutable],
        [tag, leftmost ? 1 : 0, this.keys.prefix],
      ),
    );
  }

  /**
   * The dead-letter copy of a message popped without its body (DEAD_LETTER_WITHHELD): made inside Redis
   * from its unacked entry, so the body never reaches the worker. False when the tag is no longer unacked.
   */
  async deadLetterWithheld(tag: string, queue: string, headers: Record<string, unknown>): Promise<boolean> {
    const members = stringifyKombuJson(headers).slice(1, -1);
    const info = stringifyKombuJson({ exchange: '', routing_key: queue });
    const res = await DEAD_LETTER_WITHHELD.run(
      this.redis,
      [this.keys.unacked],
      [tag, members, JSON.stringify(randomUUID()), info, this.keys.prefix, queue],
    );
    return Number(res) === 1;
  }

  /** kombu `QoS.reject`. */
  async reject(tag: string, requeue: boolean): Promise<void> {
    if (requeue) await this.restore(tag, true);
    else await this.ack(tag);
  }

  /**
   * kombu `restore_visible`: under `unacked_mutex` (SET NX EX, released only by its holder), restores every
   * message delivered more than `visibilityTimeoutS` ago. Returns how many, or null when another worker
   * (Python or ours) holds the mutex.
   */
  async restoreVisible(visibilityTimeoutS: number, limit = 1000, nowMs = Date.now()): Promise<number | null> {
    const token = randomUUID();
    const got = await this.redis.set(this.keys.unackedMutex, token, 'EX', UNACKED_MUTEX_EXPIRE_S, 'NX');
    if (got !== 'OK') return null;
    try {
      const ceil = nowMs / 1000 - visibilityTimeoutS;
      const tags = await this.redis.zrevrangebyscore(this.keys.unackedIndex, ceil, 0, 'LIMIT', 0, limit);
      let n = 0;
      for (const tag of tags) if ((await this.restore(tag)) >= 0) n++;
      return n;
    } finally {
      await RELEASE_IF_HELD.run(this.redis, [this.keys.unackedMutex], [token]);
    }
  }

  /** Moves an unacked message into the delayed set, due at `dueMs`, and acks it, atomically. False if it was no longer unacked. */
  async defer(tag: string, dueMs: number): Promise<boolean> {
    return (
      Number(
        await DEFER.run(
          this.redis,
          [this.keys.unacked, this.keys.unackedIndex, this.keys.delayed],
          [tag, Math.round(dueMs)],
        ),
      ) === 1
    );
  }

  /** Publishes straight into the delayed set (our own countdowns and retries): never unacked anywhere. */
  async publishDelayed(
    exchange: string,
    routingKey: string,
    body: Buffer,
    properties: PublishProperties,
    dueMs: number,
  ): Promise<void> {
    const { text } = encodeEnvelope(body, properties, exchange, routingKey);
    const entry = `[${text}, ${JSON.stringify(exchange)}, ${JSON.stringify(routingKey)}]`;
    await this.redis.zadd(this.keys.delayed, Math.round(dueMs), entry);
  }

  /** Moves messages due by `nowMs` back to the back of their queues; each moves once across all workers. */
  async moveDue(nowMs = Date.now(), limit = 500): Promise<number> {
    return Number(
      await MOVE_DUE.run(
        this.redis,
        [this.keys.delayed, this.keys.unroutable],
        [Math.round(nowMs), limit, this.keys.prefix],
      ),
    );
  }

  /** kombu `_size`: the sum over the priority lists. */
  async size(queue: string): Promise<number> {
    const p = this.redis.pipeline();
    for (const l of this.keys.queueLists(queue)) p.llen(l);
    const res = (await p.exec()) ?? [];
    return res.reduce((sum, [, n]) => sum + (typeof n === 'number' ? n : 0), 0);
  }

  async purge(queue: string): Promise<number> {
    const n = await this.size(queue);
    await this.redis.del(...this.keys.queueLists(queue));
    return n;
  }

  async unackedCount(): Promise<number> {
    return this.redis.hlen(this.keys.unacked);
  }

  async delayedCount(): Promise<number> {
    return this.redis.zcard(this.keys.delayed);
  }

  /** The earliest due time in the delayed set (ms), or null when it is empty. */
  async nextDue(): Promise<number | null> {
    const r = await this.redis.zrange(this.keys.delayed, 0, 0, 'WITHSCORES');
    return r[1] === undefined ? null : Number(r[1]);
  }
}
