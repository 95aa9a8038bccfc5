/**
 * Celery events on the `celeryev` topic exchange, for Flower and `celery events`: worker-online, a
 * worker-heartbeat every 2 s, worker-offline; and, with `-E`, the task-* events with the fields those tools
 * read (celery/worker/request.py, heartbeat.py). Publishing is fire-and-forget: an event that cannot be sent
 * is logged, never allowed to slow or fail a task.
 *
 * Task events are buffered as Celery's worker buffers them under its event loop (celery/events/dispatcher.py,
 * `buffer_group=['task']`, celery/worker/consumer/events.py): one message of up to 24 events, a list, routed
 * `task.multi`, sent when the buffer is full or on the next turn of the event loop. Celery's EventReceiver (Flower,
 * `celery events`, the exporters) takes a list as its events in order. A busy worker sends the events of up to
 * eight tasks in one publish instead of three publishes a task, and a lone task's events still leave within the turn.
 */
import os from 'node:os';
import { exceptionInfo } from '../backend/meta.js';
import type { Broker, ExchangeSpec } from '../broker/broker.js';
import { coerceError } from '../errors.js';
import type { Logger } from '../logger.js';
import { encodeContent } from '../protocol/content.js';
import { pyRepr, truncate } from '../protocol/repr.js';
import type { TaskMessage } from '../protocol/types.js';
import type { TaskEvents } from '../worker/events.js';
import type { LamportClock } from './clock.js';

export const EVENT_EXCHANGE = 'celeryev';
export const eventExchange: ExchangeSpec = { name: EVENT_EXCHANGE, kind: 'topic', durable: true };

/**
 * Celery's `safe_repr(exc)`: the Python class a caller would catch and its args (`ValueError('boom')`), the
 * same identity the result backend stores, never the JS class that carries it.
 */
export function exceptionRepr(error: unknown): string {
  const info = exceptionInfo(error);
  return `${info.exc_type}(${info.exc_message.map((a) => pyRepr(a)).join(', ')})`;
}

/** Celery's `buffer_limit`. */
export const TASK_EVENT_BUFFER = 24;

export const SW_IDENT = 'smarter-worker';
export const SW_VER = '0.1.0';

export class EventDispatcher implements TaskEvents {
  taskEvents: boolean;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private buffered: Record<string, unknown>[] = [];
  private flushing: NodeJS.Immediate | undefined;

  constructor(
    private readonly broker: Broker,
    private readonly nodeName: string,
    private readonly clock: LamportClock,
    private readonly logger: Logger,
    opts: { taskEvents: boolean },
    private readonly workerState: () => { active: number; processed: number },
  ) {
    this.taskEvents = opts.taskEvents;
  }

  send(type: string, fields: Record<string, unknown>): void {
    // Envelope first, then the fields, then timestamp and type: the order Celery's Event() produces.
    const body = {
      hostname: this.nodeName,
      utcoffset: Math.floor(new Date().getTimezoneOffset() / 60),
      pid: process.pid,
      clock: this.clock.forward(),
      ...fields,
      timestamp: Date.now() / 1000,
      type,
    };
    if (!type.startsWith('task-')) {
      this.publish(type.replace(/-/g, '.'), body);
      return;
    }
    this.buffered.push(body);
    if (this.buffered.length >= TASK_EVENT_BUFFER) this.flush();
    else this.flushing ??= setImmediate(() => this.flush());
  }

  /** Sends the task events buffered so far, as one `task.multi` message. */
  flush(): void {
    if (this.flushing) clearImmediate(this.flushing);
    this.flushing = undefined;
    if (this.buffered.length === 0) return;
    const events = this.buffered;
    this.buffered = [];
    this.publish('task.multi', events);
  }

  private publish(routingKey: string, body: unknown): void {
    const content = encodeContent(body);
    this.broker
      .route(EVENT_EXCHANGE, routingKey, {
        body: content.body,
        properties: {
          contentType: content.contentType,
          contentEncoding: content.contentEncoding,
          headers: { hostname: this.nodeName },
          deliveryMode: 1,
          priority: 0,
        },
      })
      .catch((err: unknown) => this.logger.debug(`event ${routingKey} not sent`, { error: coerceError(err).message }));
  }

  private workerFields(freq: number): Record<string, unknown> {
    const { active, processed } = this.workerState();
    return {
      freq,
      active,
      processed,
      loadavg: os.loadavg().map((l) => Math.ceil(l * 100) / 100),
      sw_ident: SW_IDENT,
      sw_ver: SW_VER,
      sw_sys: os.type(),
    };
  }

  startHeartbeat(intervalSeconds = 2): void {
    this.send('worker-online', this.workerFields(intervalSeconds));
    this.heartbeatTimer = setInterval(
      () => this.send('worker-heartbeat', this.workerFields(intervalSeconds)),
      intervalSeconds * 1000,
    );
    this.heartbeatTimer.unref();
  }

  heartbeatNow(): void {
    this.send('worker-heartbeat', this.workerFields(5));
  }

  stopHeartbeat(): void {
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = undefined;
    this.flush();
    this.send('worker-offline', this.workerFields(2));
  }

  /** The fields are built only when task events are on (the repr of a result is not free). */
  private task(type: string, fields: () => Record<string, unknown>): void {
    if (this.taskEvents) this.send(type, fields());
  }

  received(m: TaskMessage): void {
    this.task('task-received', () => ({
      uuid: m.id,
      name: m.task,
      args: m.argsrepr,
      kwargs: m.kwargsrepr,
      root_id: m.rootId ?? m.id,
      parent_id: m.parentId,
      retries: m.retries,
      eta: m.eta?.iso ?? null,
      expires: m.expires?.iso ?? null,
    }));
  }
  started(m: TaskMessage): void {
    this.task('task-started', () => ({ uuid: m.id }));
  }
  succeeded(m: TaskMessage, result: unknown, runtime: number): void {
    this.task('task-succeeded', () => ({ uuid: m.id, result: truncate(pyRepr(result)), runtime }));
  }
  failed(m: TaskMessage, error: Error, traceback: string): void {
    this.task('task-failed', () => ({ uuid: m.id, exception: exceptionRepr(error), traceback }));
  }
  retried(m: TaskMessage, error: unknown, traceback: string): void {
    this.task('task-retried', () => ({ uuid: m.id, exception: exceptionRepr(error), traceback }));
  }
  rejected(taskId: string, requeue: boolean): void {
    this.task('task-rejected', () => ({ uuid: taskId, requeue }));
  }
  revoked(taskId: string, how: { expired: boolean; terminated: boolean; signum: string | null }): void {
    this.task('task-revoked', () => ({
      uuid: taskId,
      terminated: how.terminated,
      signum: how.signum,
      expired: how.expired,
    }));
  }
  poisoned(): void {}
}
