/**
 * Celery's remote control (kombu pidbox) so that `celery inspect`, `celery status`, `app.control.ping()`
 * and Flower see a real worker: requests arrive on the fanout exchange `celery.pidbox` in our queue
 * `<node>.celery.pidbox`; replies go to `reply.celery.pidbox` as `{<node>: <reply>}` with the request's
 * ticket. An unknown command is answered as Celery answers it, `{"error": "KeyError('name')"}`; a malformed
 * request is logged and dropped. Nothing here can throw into the consumer. The commands themselves are in
 * commands.ts.
 */
import type { Broker, Delivery, ExchangeSpec, SubscriptionSpec } from '../broker/broker.js';
import { coerceError } from '../errors.js';
import type { Logger } from '../logger.js';
import { encodeContent } from '../protocol/content.js';
import { isRecord } from '../protocol/fields.js';
import { parseKombuJson } from '../protocol/json.js';
import { decodeTaskMessage } from '../protocol/decode.js';
import type { TaskMessage } from '../protocol/types.js';
import type { WorkerControl } from '../worker/control.js';
import type { LamportClock } from './clock.js';
import { type ControlHandler, type PoolControl, controlCommands, nok } from './commands.js';
import { type ControlPolicy, refusal } from './policy.js';
import type { EventDispatcher } from './events.js';

export const PIDBOX_EXCHANGE = 'celery.pidbox';
/** At most this many parked countdowns in one `inspect scheduled` reply (the reply is one message). */
export const PARKED_SHOWN_MAX = 1000;
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

function globMatch(pattern: string, text: string): boolean {
  const re = new RegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
  );
  return re.test(text);
}

export interface PidboxOptions {
  nodeName: string;
  /** The configuration as `inspect conf` shows it (Celery's names, secrets censored), with or without the defaults. */
  conf: (withDefaults: boolean) => Record<string, unknown>;
  brokerUrl: string;
  onShutdown: () => void;
  /** Which commands are obeyed; default all, as Celery. */
  control?: ControlPolicy;
  /** pool_grow/pool_shrink/autoscale/pool_restart's levers. */
  pool?: PoolControl;
}

export class Pidbox {
  private readonly handlers: Record<string, ControlHandler>;

  constructor(
    private readonly broker: Broker,
    private readonly worker: WorkerControl,
    private readonly clock: LamportClock,
    private readonly events: EventDispatcher,
    private readonly logger: Logger,
    private readonly opts: PidboxOptions,
  ) {
    const parked = async () => {
      if (!broker.listDelayed) return [];
      const out: Array<{ dueMs: number; msg: TaskMessage }> = [];
      for (const p of await broker.listDelayed(worker.activeQueues(), PARKED_SHOWN_MAX)) {
        try {
          out.push({ dueMs: p.dueMs, msg: decodeTaskMessage(p.raw, { accept: ['json', 'msgpack', 'yaml'] }) });
        } catch {
          // Not a task message we can read: it is dead-lettered with its reason when it falls due.
        }
      }
      return out;
    };
    this.handlers = controlCommands({
      worker,
      clock,
      events,
      logger,
      nodeName: opts.nodeName,
      conf: opts.conf,
      brokerUrl: opts.brokerUrl,
      onShutdown: opts.onShutdown,
      parked,
      learnRevokes: refusal(opts.control ?? { mode: 'all' }, 'revoke') === null,
      ...(opts.pool ? { pool: opts.pool } : {}),
    });
  }

  async start(): Promise<void> {
    await this.broker.declareExchange(pidboxExchange);
    await this.broker.declareExchange(replyExchange);
    await this.broker.subscribe(PIDBOX_EXCHANGE, pidboxSubscription(this.opts.nodeName), (d) => {
      this.handle(d).catch((err: unknown) =>
        this.logger.error('unexpected error in a control command', { error: coerceError(err).message }),
      );
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
      this.logger.warn(`could not reply to control command ${String(request.method)}`, {
        error: coerceError(err).message,
      });
    }
  }
}
