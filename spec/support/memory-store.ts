/**
 * The datastore of the in-memory broker (memory-broker.ts): queues, exchanges with kombu's routing (fanout, direct,
 * topic with `*` and `#`), locks, and the timers of `sendLater`. Several `MemoryBroker` clients share one store.
 */
import { EventEmitter } from 'node:events';
import type { BrokerLock, DeliveryHandler, ExchangeSpec, OutgoingMessage } from '../../lib/broker/broker.js';
import type { RawMessage } from '../../lib/protocol/types.js';
import type { MemoryBroker } from './memory-broker.js';

export interface Entry {
  body: Buffer;
  raw: RawMessage['properties'];
  exchange: string;
  routingKey: string;
  redelivered: boolean;
}

export interface MemConsumer {
  broker: MemoryBroker;
  handler: DeliveryHandler;
  noAck: boolean;
  prefetch: number;
  unsettled: number;
}

export class MemQueue {
  readonly ready: Entry[] = [];
  consumers: MemConsumer[] = [];
  private next = 0;
  constructor(readonly name: string) {}
  /** Round robin over the consumers that have room under their prefetch. */
  pick(): MemConsumer | undefined {
    for (let i = 0; i < this.consumers.length; i++) {
      const c = this.consumers[(this.next + i) % this.consumers.length];
      if (c && (c.noAck || c.prefetch === 0 || c.unsettled < c.prefetch)) {
        this.next = (this.next + i + 1) % this.consumers.length;
        return c;
      }
    }
    return undefined;
  }
}

interface Binding {
  queue: string;
  pattern: string;
}

function topicMatch(pattern: string, key: string): boolean {
  const p = pattern.split('.');
  const k = key === '' ? [] : key.split('.');
  const go = (i: number, j: number): boolean => {
    if (i === p.length) return j === k.length;
    if (p[i] === '#') return go(i + 1, j) || (j < k.length && go(i, j + 1));
    return j < k.length && (p[i] === '*' || p[i] === k[j]) && go(i + 1, j + 1);
  };
  return go(0, 0);
}

export class MemLock extends EventEmitter<{ lost: [] }> implements BrokerLock {
  constructor(
    private readonly store: MemoryStore,
    readonly name: string,
  ) {
    super();
  }
  get held(): boolean {
    return this.store.lockHolders.get(this.name) === this;
  }
  async tryAcquire(): Promise<boolean> {
    const holder = this.store.lockHolders.get(this.name);
    if (holder && holder !== this) return false;
    this.store.lockHolders.set(this.name, this);
    return true;
  }
  async release(): Promise<void> {
    if (this.held) this.store.lockHolders.delete(this.name);
  }
  /** Its holder died: the lock is free, and the holder hears it lost it. */
  lose(): void {
    if (!this.held) return;
    this.store.lockHolders.delete(this.name);
    this.emit('lost');
  }
}

/** The datastore several `MemoryBroker` clients share. */
export class MemoryStore {
  readonly queues = new Map<string, MemQueue>();
  readonly exchanges = new Map<string, { spec: ExchangeSpec; bindings: Binding[] }>();
  readonly lockHolders = new Map<string, MemLock>();
  private readonly timers = new Set<NodeJS.Timeout>();
  /** Every message sent, in order, with where it went (for assertions on what the worker sent). */
  readonly sent: Array<{
    exchange: string;
    routingKey: string;
    queue: string | null;
    message: OutgoingMessage;
    delayMs: number;
  }> = [];

  queue(name: string): MemQueue | undefined {
    return this.queues.get(name);
  }

  declare(name: string): MemQueue {
    let q = this.queues.get(name);
    if (!q) {
      q = new MemQueue(name);
      this.queues.set(name, q);
    }
    return q;
  }

  enqueue(queue: string, e: Entry, atHead = false): void {
    const q = this.queues.get(queue);
    if (!q) return; // As AMQP's default exchange: a message for no queue is dropped.
    if (atHead) q.ready.unshift(e);
    else q.ready.push(e);
    this.schedule(q);
  }

  route(exchange: string, routingKey: string, e: Entry): void {
    if (exchange === '') return this.enqueue(routingKey, e);
    const x = this.exchanges.get(exchange);
    if (!x) return;
    const targets = new Set<string>();
    for (const b of x.bindings) {
      const hit =
        x.spec.kind === 'fanout' ||
        (x.spec.kind === 'direct' ? b.pattern === routingKey : topicMatch(b.pattern, routingKey));
      if (hit) targets.add(b.queue);
    }
    for (const t of targets) this.enqueue(t, { ...e });
  }

  later(ms: number, fn: () => void): void {
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, ms);
    t.unref();
    this.timers.add(t);
  }

  private scheduled = new Set<MemQueue>();
  /** Delivers asynchronously, as a real broker does: never inside the call that sent or settled. */
  schedule(q: MemQueue): void {
    if (this.scheduled.has(q)) return;
    this.scheduled.add(q);
    setImmediate(() => {
      this.scheduled.delete(q);
      this.dispatch(q);
    });
  }

  private dispatch(q: MemQueue): void {
    while (q.ready.length > 0) {
      const c = q.pick();
      if (!c) return;
      const e = q.ready.shift();
      if (!e) return;
      c.broker.deliver(q, c, e);
    }
  }

  /** Stops the timers of `sendLater` (what they hold is lost, as in a datastore that is wiped). */
  clear(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }
}
