/**
 * Where kombu's Redis transport keeps things (kombu/transport/redis.py), in one place. Names are kombu's
 * defaults; `prefix` is kombu's `global_keyprefix` transport option (prepended to every key and channel).
 */

/** kombu `Channel.sep`: joins a queue and its priority, and the fields of a binding. */
export const SEP = '\x06\x16';
/** kombu `PRIORITY_STEPS`: BRPOP serves the keys in this order, so priority 0 is served first. */
export const PRIORITY_STEPS = [0, 3, 6, 9] as const;
export const MAX_PRIORITY = 9;

export interface KombuKeyOptions {
  /** kombu `global_keyprefix` (default ''). */
  prefix?: string;
  /** Database number of the URL: kombu's fanout channels start with `/{db}.` (`fanout_prefix`). */
  db?: number;
}

/** kombu `_get_message_priority`: an int clamped to 0..9, 0 when absent or not a number. */
export function messagePriority(value: unknown): number {
  const n =
    typeof value === 'number' ? Math.trunc(value) : typeof value === 'string' ? Number.parseInt(value, 10) : Number.NaN;
  if (!Number.isFinite(n)) return 0;
  return Math.max(0, Math.min(MAX_PRIORITY, n));
}

/** kombu `priority(n)`: the step at or below n (bisect right, minus one). */
export function priorityStep(priority: number): number {
  let step: number = PRIORITY_STEPS[0];
  for (const s of PRIORITY_STEPS) if (priority >= s) step = s;
  return step;
}

export class KombuKeys {
  readonly prefix: string;
  readonly db: number;

  constructor(options: KombuKeyOptions = {}) {
    this.prefix = options.prefix ?? '';
    this.db = options.db ?? 0;
  }

  /** kombu `_q_for_pri`: the bare queue for step 0, `<queue>\x06\x16<step>` otherwise. */
  queue(name: string, priority = 0): string {
    const step = priorityStep(messagePriority(priority));
    return this.prefix + (step ? `${name}${SEP}${step}` : name);
  }

  /** Every list of a queue, in the order BRPOP serves them. */
  queueLists(name: string): string[] {
    return PRIORITY_STEPS.map((s) => this.queue(name, s));
  }

  /** The queue name a popped list key belongs to (kombu's `rsplit(sep, 1)[0]` after removing the prefix). */
  queueOfList(key: string): string {
    const bare = key.startsWith(this.prefix) ? key.slice(this.prefix.length) : key;
    const at = bare.lastIndexOf(SEP);
    return at < 0 ? bare : bare.slice(0, at);
  }

  get unacked(): string {
    return `${this.prefix}unacked`;
  }

  get unackedIndex(): string {
    return `${this.prefix}unacked_index`;
  }

  get unackedMutex(): string {
    return `${this.prefix}unacked_mutex`;
  }

  /** Ours, not kombu's: messages waiting for their ETA (score = due time in ms). */
  get delayed(): string {
    return `${this.prefix}smarter.delayed`;
  }

  /** Ours: restored or due messages that no binding routes any more, kept whole rather than dropped. */
  /** What one pop request took, until the next pop of its loop (scripts.ts POP): a resent pop gets it again. */
  popRequest(id: string): string {
    return `${this.prefix}smarter.pop.${id}`;
  }

  get unroutable(): string {
    return `${this.prefix}smarter.unroutable`;
  }

  /** kombu `keyprefix_queue`: the set of bindings of an exchange. */
  binding(exchange: string): string {
    return `${this.prefix}_kombu.binding.${exchange}`;
  }

  static bindingMember(routingKey: string, queue: string, pattern = ''): string {
    return [routingKey, pattern, queue].join(SEP);
  }

  /**
   * kombu `_get_publish_topic` with `fanout_prefix` and `fanout_patterns` on (their defaults): the pub/sub
   * channel of a fanout exchange, with the routing key when there is one.
   */
  fanoutTopic(exchange: string, routingKey = ''): string {
    const base = `${this.prefix}/${this.db}.${exchange}`;
    return routingKey ? `${base}/${routingKey}` : base;
  }

  /** kombu `_queue_bind` for fanout: AMQP's `#` becomes a glob `*` for PSUBSCRIBE. */
  fanoutPattern(exchange: string, routingKey = ''): string {
    return this.fanoutTopic(exchange, routingKey.replace(/#/g, '*'));
  }
}
