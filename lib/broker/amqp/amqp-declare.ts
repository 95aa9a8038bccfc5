/**
 * What the AMQP broker declares (task queues, exchanges, topologies: the delay levels, pidbox, events),
 * remembered so that a fresh connection, or a consumer whose queue was deleted, gets all of it again.
 * Every declaration runs on a scratch channel: a passive declare answers 404 by closing its channel.
 */
import type { Channel, ChannelModel } from 'amqplib';
import { coerceError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import type { DelayQueueType, ExchangeSpec, QueueSpec, QueueStats } from '../broker.js';
import { type QueueDecl, type Topology, delayBinding, delayTopology, exchangeDecl } from './topology.js';

export function amqpCode(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

/** A short-lived channel for operations that may close it (passive declares answer 404 by closing). */
export async function scratch<T>(model: ChannelModel, fn: (ch: Channel) => Promise<T>): Promise<T> {
  const ch = await model.createChannel();
  ch.on('error', () => undefined);
  try {
    return await fn(ch);
  } finally {
    await ch.close().catch(() => undefined);
  }
}

/** Counts of a queue by passive declare; null when it does not exist (the 404 closes only a scratch channel). */
export async function statsOn(model: ChannelModel, name: string): Promise<QueueStats | null> {
  return scratch(model, async (ch) => {
    try {
      const r = await ch.checkQueue(name);
      return { messageCount: r.messageCount, consumerCount: r.consumerCount };
    } catch (err) {
      if (amqpCode(err) === 404) return null;
      throw err;
    }
  });
}

/** Declares a queue only if it does not exist: an existing one may carry other arguments (quorum, priority). */
async function ensureQueueOn(model: ChannelModel, q: QueueDecl): Promise<void> {
  if ((await statsOn(model, q.name)) !== null) return;
  await scratch(model, (ch) =>
    ch.assertQueue(q.name, {
      durable: q.durable,
      autoDelete: q.autoDelete ?? false,
      exclusive: q.exclusive ?? false,
      arguments: q.arguments ?? {},
    }),
  );
}

/** Declares a topology (exchanges, then queues that do not exist yet, then bindings) on `model`. */
export async function topologyOn(model: ChannelModel, t: Topology): Promise<void> {
  await scratch(model, async (ch) => {
    await Promise.all(
      t.exchanges.map((e) =>
        ch.assertExchange(e.name, e.type, { durable: e.durable, autoDelete: e.autoDelete ?? false }),
      ),
    );
  });
  // In parallel, each on its own scratch channel (a 404 closes only its own): the 28 delay levels cost
  // one round of round trips at start-up instead of 28.
  await Promise.all(t.queues.map((q) => ensureQueueOn(model, q)));
  await scratch(model, async (ch) => {
    // One channel, the first failure failing them all: amqplib sends each once the last is answered, and more
    // channels gain nothing, since RabbitMQ answers a connection's declarations in turn (and they would hold back
    // the consumers declared beside them).
    await Promise.all(
      t.bindings.map((b) =>
        b.toExchange
          ? ch.bindExchange(b.destination, b.source, b.pattern)
          : ch.bindQueue(b.destination, b.source, b.pattern),
      ),
    );
  });
}

export interface DeclarationOptions {
  logger: Logger;
  /** Type of the task queues declared here when they do not exist (Celery's `task_default_queue_type`). */
  queueType?: DelayQueueType | undefined;
}

export class AmqpDeclarations {
  private readonly queues = new Map<string, QueueSpec>();
  private readonly topologies = new Map<string, Topology>();
  private readonly exchanges = new Map<string, ExchangeSpec>();
  /** Set by `declareDelayed`: task queues declared from then on are bound to the delay topology. */
  private delayType: DelayQueueType | undefined;
  /** While `declareDelayed` runs: what sends into the levels wait for. */
  private delayLevelsPending: Promise<void> | undefined;
  private readonly deadLetterQueues = new Set<string>();

  /** `model`: the connection to declare on now, waiting for one if need be. */
  constructor(
    private readonly opts: DeclarationOptions,
    private readonly model: () => Promise<ChannelModel>,
  ) {}

  /** The delay queues' type once `declareDelayed` ran; undefined before. */
  get delayQueueType(): DelayQueueType | undefined {
    return this.delayType;
  }

  exchange(name: string): ExchangeSpec | undefined {
    return this.exchanges.get(name);
  }

  isDeadLetterQueue(queue: string): boolean {
    return this.deadLetterQueues.has(queue);
  }

  /** Everything declared so far, on a fresh connection: topologies first, then the queues bound to them. */
  async restoreOn(model: ChannelModel): Promise<void> {
    for (const t of this.topologies.values()) await topologyOn(model, t);
    for (const spec of this.queues.values()) await this.declareOn(model, spec);
  }

  /** A queue deleted under its consumer, again: itself, and the topologies that declare it (pidbox) or bind to it (its delay binding died with it). */
  async restoreQueueOn(model: ChannelModel, queue: string): Promise<void> {
    const spec = this.queues.get(queue);
    if (spec) await this.declareOn(model, spec);
    for (const t of this.topologies.values()) {
      if (t.queues.some((q) => q.name === queue) || t.bindings.some((b) => b.destination === queue && !b.toExchange)) {
        await topologyOn(model, t);
      }
    }
  }

  private async declareOn(model: ChannelModel, spec: QueueSpec): Promise<void> {
    const { name } = spec;
    // Celery's declaration: durable, not exclusive, not auto-delete; arguments only when configured.
    const args = spec.arguments ?? (this.opts.queueType === 'quorum' ? { 'x-queue-type': 'quorum' } : undefined);
    await ensureQueueOn(model, { name, durable: true, ...(args ? { arguments: args } : {}) });
    try {
      await scratch(model, async (ch) => {
        await ch.assertExchange(name, 'direct', { durable: true, autoDelete: false });
        await ch.bindQueue(name, name, name);
      });
    } catch (err) {
      // The default exchange still routes by queue name, which is how Celery publishes to direct queues.
      this.opts.logger.warn(`could not bind queue ${name} to exchange ${name}`, { error: coerceError(err).message });
    }
  }

  async assertTopology(t: Topology): Promise<void> {
    await topologyOn(await this.model(), t);
    this.topologies.set(JSON.stringify(t), t);
  }

  async declareQueue(spec: QueueSpec): Promise<void> {
    await this.declareOn(await this.model(), spec);
    this.queues.set(spec.name, spec);
    if (this.delayType !== undefined) {
      await this.assertTopology({ exchanges: [], queues: [], bindings: [delayBinding(spec.name)] });
    }
  }

  async declareDelayed(options: { queueType?: DelayQueueType } = {}): Promise<void> {
    const pending = this.declareDelayLevels(options.queueType ?? 'quorum');
    this.delayLevelsPending = pending;
    try {
      await pending;
    } finally {
      if (this.delayLevelsPending === pending) this.delayLevelsPending = undefined;
    }
  }

  /** Resolves once the delay levels being declared exist: a send into them (a far ETA at start-up) waits for this. */
  async delayLevelsReady(): Promise<void> {
    await this.delayLevelsPending?.catch(() => undefined);
  }

  private async declareDelayLevels(queueType: DelayQueueType): Promise<void> {
    await this.assertTopology(delayTopology(queueType));
    this.delayType = queueType;
    // The task queues declared meanwhile (the worker declares them beside the levels) get their delay route
    // here; those declared from now on bind their own (declareQueue).
    const queues = [...this.queues.keys()].filter((q) => !this.deadLetterQueues.has(q));
    if (queues.length > 0) await this.assertTopology({ exchanges: [], queues: [], bindings: queues.map(delayBinding) });
  }

  async declareExchange(spec: ExchangeSpec): Promise<void> {
    await this.assertTopology({ exchanges: [exchangeDecl(spec)], queues: [], bindings: [] });
    this.exchanges.set(spec.name, spec);
  }

  async declareDeadLetterQueue(queue: string): Promise<void> {
    // Declared as a task queue, but never bound to the delay topology: nothing is sent to it later.
    await this.declareOn(await this.model(), { name: queue });
    this.queues.set(queue, { name: queue });
    this.deadLetterQueues.add(queue);
  }
}
