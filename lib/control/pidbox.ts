/**
 * Celery's remote control (kombu pidbox) so that `celery inspect`, `celery status`, `app.control.ping()`
 * and Flower see a real worker: requests arrive on the fanout exchange `celery.pidbox` in our queue
 * `<node>.celery.pidbox`; replies go to `reply.celery.pidbox` as `{<node>: <reply>}` with the request's
 * ticket. An unknown command is answered as Celery answers it, `{"error": "KeyError('name')"}`; a malformed
 * request is logged and dropped. Nothing here can throw into the consumer.
 */
import os from 'node:os';
import type { Broker, Delivery, ExchangeSpec, SubscriptionSpec } from '../broker/broker.js';
import { coerceError } from '../errors.js';
import type { Logger } from '../logger.js';
import { encodeContent } from '../protocol/content.js';
import { isRecord } from '../protocol/fields.js';
import { parseKombuJson } from '../protocol/json.js';
import type { TaskMessage } from '../protocol/types.js';
import type { WorkerControl } from '../worker/control.js';
import type { LamportClock } from './clock.js';
import { type ControlPolicy, refusal } from './policy.js';
import type { EventDispatcher } from './events.js';

export const PIDBOX_EXCHANGE = 'celery.pidbox';
export const REPLY_EXCHANGE = 'reply.celery.pidbox';

export function pidboxQueue(nodeName: string): string {
  return `${nodeName}.celery.pidbox`;
}

/** Celery's control exchanges, with its exact flags (golden: pidbox-queue-declare). */
export const pidboxExchange: ExchangeSpec = { name: PIDBOX_EXCHANGE, kind: 'fanout', durable: false };
export const replyExchange: ExchangeSpec = { name: REPLY_EXCHANGE, kind: 'direct', durable: false };

/** The worker's own control queue on `celery.pidbox`, with Celery's expiry and TTL (golden: pidbox-queue-declare). */
export function pidboxSubscription(nodeName: string): SubscriptionSpec {
  return { queue: pidboxQueue(nodeName), expiresMs: 10_000, messageTtlMs: 300_000 };
}

type Reply = unknown;
type Handler = (args: Record<string, unknown>) => unknown;

const ok = (x: unknown) => ({ ok: x });
const nok = (x: unknown) => ({ error: x });

function globMatch(pattern: string, text: string): boolean {
  const re = new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`);
  return re.test(text);
}

/** A consumed queue as `inspect active_queues` shows it (kombu `Queue.as_dict(recurse=True)`, golden 13). */
export function activeQueueInfo(name: string) {
  return {
    name,
    exchange: { name, type: 'direct', arguments: null, durable: true, passive: false, auto_delete: false, delivery_mode: null, no_declare: false },
    routing_key: name,
    queue_arguments: null,
    binding_arguments: null,
    consumer_arguments: null,
    durable: true,
    exclusive: false,
    auto_delete: false,
    no_ack: false,
    alias: null,
    bindings: [],
    no_declare: null,
    expires: null,
    message_ttl: null,
    max_length: null,
    max_length_bytes: null,
    max_priority: null,
  };
}

export interface PidboxOptions {
  nodeName: string;
  /** The resolved configuration, secrets already redacted, for `inspect conf`. */
  conf: Record<string, unknown>;
  brokerUrl: string;
  onShutdown: () => void;
  /** Which commands are obeyed; default all, as Celery. */
  control?: ControlPolicy;
}

export class Pidbox {
  private readonly handlers: Record<string, Handler>;

  constructor(
    private readonly broker: Broker,
    private readonly worker: WorkerControl,
    private readonly clock: LamportClock,
    private readonly events: EventDispatcher,
    private readonly logger: Logger,
    private readonly opts: PidboxOptions,
  ) {
    this.handlers = this.commands();
  }

  async start(): Promise<void> {
    await this.broker.declareExchange(pidboxExchange);
    await this.broker.declareExchange(replyExchange);
    await this.broker.subscribe(PIDBOX_EXCHANGE, pidboxSubscription(this.opts.nodeName), (d) => {
      this.handle(d).catch((err: unknown) => this.logger.error('unexpected error in a control command', { error: coerceError(err).message }));
    });
  }

  async stop(): Promise<void> {
    await this.broker.cancel(pidboxQueue(this.opts.nodeName)).catch(() => undefined);
  }

  private async handle(d: Delivery): Promise<void> {
    let request: Record<string, unknown>;
    try {
      const body = parseKombuJson(d.raw.body.toString('utf8'));
      if (!isRecord(body) || typeof body.method !== 'string') throw new Error('no "method"');
      request = body;
    } catch (err) {
      this.logger.warn(`dropped a malformed control message: ${coerceError(err).message}`);
      return;
    }
    const headers = isRecord(d.raw.properties.headers) ? d.raw.properties.headers : {};
    this.clock.adjust(headers.clock);
    if (!this.forUs(request)) return;
    const method = request.method as string;
    const args = isRecord(request.arguments) ? request.arguments : {};
    let reply: Reply;
    const handler = this.handlers[method];
    const refused = refusal(this.opts.control ?? { mode: 'all' }, method);
    if (refused !== null) {
      this.logger.warn(`refused ${refused}`, { method });
      await this.reply(request, nok(refused));
      return;
    }
    try {
      reply = handler ? await handler(args) : nok(`KeyError('${method}')`);
    } catch (err) {
      const e = coerceError(err);
      this.logger.error(`control command ${method} failed: ${e.message}`);
      reply = nok(`${e.name}('${e.message}')`);
    }
    if (!handler) this.logger.warn(`unknown control command ${JSON.stringify(method)}`);
    await this.reply(request, reply);
  }

  private forUs(request: Record<string, unknown>): boolean {
    const node = this.opts.nodeName;
    if (Array.isArray(request.destination)) return request.destination.includes(node);
    if (typeof request.pattern === 'string' && typeof request.matcher === 'string') {
      try {
        return request.matcher === 'pcre' ? new RegExp(request.pattern).test(node) : globMatch(request.pattern, node);
      } catch {
        // A pattern that is no regular expression matches no node; thrown, it would escape the consumer.
        this.logger.warn(`dropped a control message with an invalid pattern ${JSON.stringify(request.pattern)}`);
        return false;
      }
    }
    return true;
  }

  private async reply(request: Record<string, unknown>, reply: Reply): Promise<void> {
    const to = request.reply_to;
    if (!isRecord(to) || typeof to.routing_key !== 'string') return;
    const content = encodeContent({ [this.opts.nodeName]: reply });
    try {
      await this.broker.route(typeof to.exchange === 'string' ? to.exchange : REPLY_EXCHANGE, to.routing_key, {
        body: content.body,
        properties: {
          contentType: content.contentType,
          contentEncoding: content.contentEncoding,
          headers: { ticket: request.ticket ?? null, clock: this.clock.forward() },
          deliveryMode: 1,
          priority: 0,
        },
      });
    } catch (err) {
      this.logger.warn(`could not reply to control command ${String(request.method)}`, { error: coerceError(err).message });
    }
  }

  private info(m: TaskMessage, extra: { started?: number; acknowledged?: boolean; queue?: string } = {}) {
    return {
      id: m.id,
      name: m.task,
      args: m.args,
      kwargs: m.kwargs,
      type: m.task,
      hostname: this.opts.nodeName,
      time_start: extra.started !== undefined ? extra.started / 1000 : null,
      acknowledged: extra.acknowledged ?? false,
      delivery_info: { exchange: '', routing_key: extra.queue ?? '', priority: m.priority, redelivered: false },
      worker_pid: process.pid,
    };
  }

  private commands(): Record<string, Handler> {
    const w = this.worker;
    const ids = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : typeof v === 'string' ? [v] : []);
    return {
      ping: () => ok('pong'),
      clock: () => ({ clock: this.clock.current }),
      hello: () => ({ revoked: Object.fromEntries([...w.revoked.entries()].map(([id, t]) => [id, t / 1000])), clock: this.clock.current }),
      heartbeat: () => {
        this.events.heartbeatNow();
        return null;
      },
      registered: (a) => w.registeredNames().filter((n) => a.builtins === true || !n.startsWith('celery.')),
      active: () => w.activeRuns().map((r) => this.info(r.msg, { started: r.startedAt, acknowledged: r.acknowledged, queue: r.queue })),
      reserved: () => w.reservedMessages().map((m) => this.info(m)),
      scheduled: () => w.heldMessages().map((m) => ({ eta: m.eta?.iso ?? null, priority: 6, request: this.info(m) })),
      revoked: () => w.revoked.ids(),
      active_queues: () => w.activeQueues().map((q) => activeQueueInfo(q)),
      stats: () => this.stats(),
      conf: () => this.opts.conf,
      report: () => ok(`software -> ${'smarter-worker'} node ${process.version} ${os.type()} ${os.release()}\nnode: ${this.opts.nodeName}\n`),
      revoke: (a) => {
        const list = ids(a.task_id);
        const running = w.revokeTasks(list, a.terminate === true);
        if (a.terminate === true) return ok(`terminate: ${running.length > 0 ? running.join(', ') : 'tasks unknown'}`);
        return ok(`tasks ${list.join(', ')} flagged as revoked`);
      },
      terminate: (a) => {
        const running = w.revokeTasks(ids(a.task_id), true);
        return ok(`terminate: ${running.length > 0 ? running.join(', ') : 'tasks unknown'}`);
      },
      enable_events: () => {
        if (this.events.taskEvents) return ok('task events already enabled');
        this.events.taskEvents = true;
        return ok('task events enabled');
      },
      disable_events: () => {
        if (!this.events.taskEvents) return ok('task events already disabled');
        this.events.taskEvents = false;
        return ok('task events disabled');
      },
      rate_limit: (a) => {
        const rate = typeof a.rate_limit === 'string' || typeof a.rate_limit === 'number' ? String(a.rate_limit) : null;
        try {
          return w.setRateLimit(String(a.task_name), rate) ? ok('new rate limit set successfully') : nok('unknown task');
        } catch (err) {
          return nok(coerceError(err).message);
        }
      },
      time_limit: (a) => {
        const num = (v: unknown) => (typeof v === 'number' ? v : null);
        return w.setTimeLimits(String(a.task_name), num(a.soft), num(a.hard)) ? ok('time limits set successfully') : nok('unknown task');
      },
      add_consumer: async (a) => {
        if (typeof a.queue !== 'string' || a.queue === '') return nok('add_consumer needs a queue');
        await w.addConsumer(a.queue);
        return ok(`add consumer ${a.queue}`);
      },
      cancel_consumer: async (a) => {
        if (typeof a.queue !== 'string') return nok('cancel_consumer needs a queue');
        await w.cancelConsumer(a.queue);
        return ok(`no longer consuming from ${a.queue}`);
      },
      shutdown: () => {
        this.logger.warn('shutdown requested by remote control');
        setImmediate(() => this.opts.onShutdown());
        return ok('shutting down');
      },
    };
  }

  private stats() {
    const w = this.worker;
    const usage = process.resourceUsage();
    const scheme = (/^([a-z]+):/i.exec(this.opts.brokerUrl)?.[1] ?? 'amqp').toLowerCase();
    // kombu's transport names: Flower and `inspect stats` show them.
    const transport = scheme === 'rediss' ? 'redis' : scheme === 'amqps' ? 'amqp' : scheme;
    const url = new URL(this.opts.brokerUrl.split(';')[0]?.replace(/^[a-z]+:/i, 'http:') ?? 'http://localhost');
    return {
      total: Object.fromEntries(w.counters().processed),
      pid: process.pid,
      clock: String(this.clock.current),
      uptime: Math.round((Date.now() - w.startedAt) / 1000),
      pool: {
        implementation: 'smarter-worker:async',
        'max-concurrency': w.concurrency,
        processes: [process.pid],
        'max-tasks-per-child': 'N/A',
        'put-guarded-by-semaphore': false,
        timeouts: [0, 0],
        writes: {},
      },
      broker: {
        hostname: url.hostname,
        userid: decodeURIComponent(url.username),
        virtual_host: decodeURIComponent(url.pathname.slice(1)) || (transport === 'amqp' ? '/' : '0'),
        port: Number(url.port || (transport === 'amqp' ? 5672 : transport === 'sentinel' ? 26379 : 6379)),
        insist: false,
        ssl: /^(amqps|rediss):/i.test(this.opts.brokerUrl),
        transport,
        connect_timeout: 4,
        transport_options: {},
        login_method: 'PLAIN',
        uri_prefix: null,
        heartbeat: 120,
        failover_strategy: 'round-robin',
        alternates: [],
      },
      prefetch_count: w.prefetchCount,
      rusage: {
        utime: usage.userCPUTime / 1e6,
        stime: usage.systemCPUTime / 1e6,
        maxrss: usage.maxRSS,
        minflt: usage.minorPageFault,
        majflt: usage.majorPageFault,
        nvcsw: usage.voluntaryContextSwitches,
        nivcsw: usage.involuntaryContextSwitches,
      },
    };
  }
}
