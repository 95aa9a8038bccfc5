/**
 * Everything this process sends as a task goes through here: retries, callbacks, chain steps, errbacks,
 * `ctx.applyAsync`, Beat. It routes like Celery's producer (a queue name → the default exchange with the
 * queue as routing key), declares a target queue once before its first message as Celery's producer does,
 * and resolves only when the broker confirmed the message.
 *
 * A follow-up whose own message is already acked (`hold`) is not thrown back when the broker refuses it: it
 * goes to the publisher's hold (publish-hold.ts), and is sent again until the broker takes it.
 */
import { randomUUID } from 'node:crypto';
import type { Broker, Delivery } from '../broker/broker.js';
import { sendLater } from '../broker/delayed.js';
import { sendOrDeclare } from '../broker/send-or-declare.js';
import { hasCode } from '../errors.js';
import { type Logger, nullLogger } from '../logger.js';
import { type EncodedMessage, encodeTaskMessage, type OutgoingTask } from '../protocol/encode.js';
import type { Signature, TaskMessage } from '../protocol/types.js';
import { PyDateTime } from '../protocol/values.js';
import type { ApplyOptions } from '../registry/context.js';
import { type HeldPublish, type HoldLimits, PublishHold } from './publish-hold.js';

export interface Route {
  queue?: string | undefined;
  exchange?: string | undefined;
  routingKey?: string | undefined;
}

export interface PublisherOptions {
  /** Queue for tasks with no declared queue and no `queue` option (Celery `task_default_queue`). */
  defaultQueue: string;
  /** Declared queue of a task registered here, used when a message names none. */
  queueOf: (taskName: string) => string | undefined;
  /** `origin` header of messages we send: our node name. */
  origin: string;
  /** Our reply_to when a signature names none (Celery's `app.thread_oid`). */
  oid: string;
  /**
   * Whether countdowns of a second or more go through the broker's delay topology (never held by a
   * worker); false sends every ETA message straight to its queue (Celery's classic behaviour).
   */
  delay: boolean;
  now?: () => number;
  /** Where the hold says what it holds; absent, it is silent. */
  logger?: Logger;
  holdLimits?: HoldLimits;
}

/**
 * Held instead of thrown when the broker refuses it (the follow-up of a message already acked): `what` names it
 * in the logs. A message the broker cannot route (`BROKER_UNROUTABLE`) is thrown all the same: sent again, it
 * would be refused again.
 */
export interface HoldAs {
  what: string;
}

/** A delivery rebuilt from a held dead-letter copy, for `Broker.deadLetter` (already settled: nothing to redeliver). */
function replayed(p: Extract<HeldPublish, { kind: 'dead-letter' }>): Delivery {
  return {
    raw: { body: p.body, properties: p.properties },
    queue: p.from.queue,
    exchange: p.from.exchange,
    routingKey: p.from.routingKey,
    redelivered: false,
    live: true,
    settled: true,
    ack: () => undefined,
    reject: () => undefined,
  };
}

function optNumber(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}
function optString(v: unknown): string | undefined {
  return typeof v === 'string' && v.length > 0 ? v : undefined;
}

/** An eta or expires option: an instant (Date, or ISO text as in a signature) or seconds from `nowMs`. */
function instant(nowMs: number, at: Date | string | undefined, inSeconds: number | undefined): PyDateTime | null {
  if (at instanceof Date) return PyDateTime.fromEpochMs(at.getTime());
  if (at) return new PyDateTime(at);
  return inSeconds !== undefined ? PyDateTime.fromEpochMs(nowMs + inSeconds * 1000) : null;
}

export class TaskPublisher {
  private readonly declared = new Set<string>();
  private readonly now: () => number;
  /** Follow-ups the broker refused, sent again until it takes them. */
  readonly held: PublishHold;

  constructor(
    private readonly broker: Broker,
    private readonly opts: PublisherOptions,
  ) {
    this.now = opts.now ?? Date.now;
    this.held = new PublishHold((p) => this.sendHeld(p), opts.logger ?? nullLogger(), opts.holdLimits);
  }

  get oid(): string {
    return this.opts.oid;
  }

  queueFor(taskName: string, route: Route): string {
    const declared = this.opts.queueOf(taskName);
    return route.queue ?? (declared !== undefined && declared !== '*' ? declared : this.opts.defaultQueue);
  }

  async send(task: OutgoingTask, route: Route = {}, hold?: HoldAs): Promise<void> {
    const msg = encodeTaskMessage({ origin: this.opts.origin, ...task }, this.now());
    const target = route.exchange
      ? { kind: 'exchange' as const, exchange: route.exchange, routingKey: route.routingKey ?? '' }
      : {
          kind: 'queue' as const,
          queue: this.queueFor(task.task, route),
          ...(task.eta ? { dueAt: task.eta.epochMs } : {}),
        };
    const held: HeldPublish = {
      id: task.id,
      what: hold?.what ?? 'message',
      body: msg.body,
      ...target,
      properties: msg.properties,
    };
    try {
      await this.sendHeld(held);
    } catch (err) {
      if (!hold || hasCode(err, 'BROKER_UNROUTABLE')) throw err;
      await this.held.hold(held, err);
    }
  }

  /** One attempt at a message, held or not. */
  private async sendHeld(p: HeldPublish): Promise<void> {
    switch (p.kind) {
      case 'exchange':
        return this.broker.route(p.exchange, p.routingKey, { body: p.body, properties: p.properties });
      case 'dead-letter':
        return this.broker.deadLetter(replayed(p), { ...p.why, at: new Date(p.why.at) });
      case 'queue':
        return this.sendToQueue(
          p.queue,
          { body: p.body, properties: p.properties },
          p.dueAt === undefined ? 0 : p.dueAt - this.now(),
        );
    }
  }

  private async sendToQueue(queue: string, msg: EncodedMessage, waitMs: number): Promise<void> {
    await this.ensureQueue(queue);
    // A wait shorter than the broker's resolution is simply held by the consuming worker.
    const { nativeDelay, delayResolutionMs } = this.broker.capabilities;
    if (this.opts.delay && nativeDelay && waitMs >= delayResolutionMs) {
      await sendLater(this.broker, queue, msg, waitMs);
      return;
    }
    // Deleted since we declared it: declared again, as Celery's producer declares a queue it sends to.
    await sendOrDeclare(
      () => this.broker.send(queue, msg),
      async () => {
        this.declared.delete(queue);
        await this.ensureQueue(queue);
      },
    );
  }

  /** Declares a queue once (with the broker's delay route, once `declareDelayed` ran, so delayed messages come back to it). */
  async ensureQueue(queue: string): Promise<void> {
    if (this.declared.has(queue)) return;
    await this.broker.declareQueue({ name: queue });
    this.declared.add(queue);
  }

  /** Celery `send_task` with `apply_async` options; resolves with the task id. */
  async apply(
    name: string,
    args: unknown[],
    kwargs: Record<string, unknown>,
    o: ApplyOptions = {},
    parent?: TaskMessage,
    hold?: HoldAs,
  ): Promise<string> {
    const id = o.taskId ?? randomUUID();
    const now = this.now();
    await this.send(
      {
        id,
        task: name,
        args,
        kwargs,
        eta: instant(now, o.eta, o.countdown),
        expires: o.expires instanceof Date ? instant(now, o.expires, undefined) : instant(now, undefined, o.expires),
        timelimit: [o.timeLimit ?? null, o.softTimeLimit ?? null],
        rootId: parent ? (parent.rootId ?? parent.id) : id,
        parentId: parent ? parent.id : null,
        priority: o.priority ?? 0,
        customHeaders: o.headers ?? {},
        callbacks: o.link ?? null,
        errbacks: o.linkError ?? null,
        replyTo: o.replyTo ?? this.opts.oid,
      },
      { queue: o.queue },
      hold,
    );
    return id;
  }

  /**
   * Celery's "apply a signature" (canvas `apply_async`): partial args are prepended unless the signature is
   * immutable; its frozen options (task_id, reply_to, group, chain, links, routing) are honoured.
   */
  async applySignature(
    sig: Signature,
    partialArgs: unknown[],
    parent: TaskMessage | null,
    extra: { group?: string; groupIndex?: number; chain?: Signature[] | null; priority?: number; hold?: HoldAs } = {},
  ): Promise<string> {
    const o = sig.options;
    if (sig.subtask_type === 'chain') return this.applyChain(sig, partialArgs, parent, extra.hold);
    if (sig.subtask_type === 'group') return this.applyGroup(sig, partialArgs, parent, extra.hold);
    const id = optString(o.task_id) ?? randomUUID();
    const args = sig.immutable ? sig.args : [...partialArgs, ...sig.args];
    const now = this.now();
    await this.send(
      {
        id,
        task: sig.task,
        args,
        kwargs: sig.kwargs,
        eta: instant(now, optString(o.eta), optNumber(o.countdown)),
        expires: instant(now, optString(o.expires), optNumber(o.expires)),
        timelimit: [optNumber(o.time_limit) ?? null, optNumber(o.soft_time_limit) ?? null],
        rootId: optString(o.root_id) ?? (parent ? (parent.rootId ?? parent.id) : id),
        parentId: optString(o.parent_id) ?? parent?.id ?? null,
        group: extra.group ?? optString(o.group_id) ?? null,
        groupIndex: extra.groupIndex ?? optNumber(o.group_index) ?? null,
        chord: (o.chord as Signature | undefined) ?? null,
        chain: extra.chain ?? null,
        callbacks: (o.link as Signature[] | undefined) ?? null,
        errbacks: (o.link_error as Signature[] | undefined) ?? null,
        priority: extra.priority ?? optNumber(o.priority) ?? 0,
        customHeaders: (o.headers as Record<string, unknown> | undefined) ?? {},
        shadow: optString(o.shadow) ?? null,
        replyTo: optString(o.reply_to) ?? this.opts.oid,
      },
      { queue: optString(o.queue), exchange: optString(o.exchange), routingKey: optString(o.routing_key) },
      extra.hold,
    );
    return id;
  }

  private async applyChain(
    sig: Signature,
    partialArgs: unknown[],
    parent: TaskMessage | null,
    hold: HoldAs | undefined,
  ): Promise<string> {
    const tasks = (sig.kwargs.tasks as Signature[] | undefined) ?? [];
    const [first, ...rest] = tasks;
    if (!first) return randomUUID();
    return this.applySignature(first, partialArgs, parent, {
      chain: rest.length > 0 ? [...rest].reverse() : null,
      ...(hold ? { hold } : {}),
    });
  }

  private async applyGroup(
    sig: Signature,
    partialArgs: unknown[],
    parent: TaskMessage | null,
    hold: HoldAs | undefined,
  ): Promise<string> {
    const tasks = (sig.kwargs.tasks as Signature[] | undefined) ?? [];
    const group = optString(sig.options.task_id) ?? randomUUID();
    for (const [i, t] of tasks.entries()) {
      await this.applySignature(t, partialArgs, parent, { group, groupIndex: i, ...(hold ? { hold } : {}) });
    }
    return group;
  }

  /** Several callbacks are sent as one group (Celery `_dispatch_callbacks_and_chain`). */
  async applyCallbacks(
    callbacks: Signature[],
    retval: unknown[],
    parent: TaskMessage,
    priority?: number,
    hold?: HoldAs,
  ): Promise<string[]> {
    const ids: string[] = [];
    const held = hold ? { hold } : {};
    if (callbacks.length === 1 && callbacks[0]) {
      ids.push(
        await this.applySignature(callbacks[0], retval, parent, priority !== undefined ? { priority, ...held } : held),
      );
      return ids;
    }
    const plain = callbacks.filter((c) => c.subtask_type !== 'group');
    for (const g of callbacks.filter((c) => c.subtask_type === 'group')) {
      ids.push(await this.applySignature(g, retval, parent, held));
    }
    const group = randomUUID();
    for (const [i, c] of plain.entries()) {
      ids.push(await this.applySignature(c, retval, parent, { group, groupIndex: i, ...held }));
    }
    return ids;
  }
}
