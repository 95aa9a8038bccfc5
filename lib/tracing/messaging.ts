/**
 * The spans of Celery messages, in OpenTelemetry's messaging conventions. The trace context travels where
 * Celery's own instrumentation (`opentelemetry-instrumentation-celery`) puts it: W3C `traceparent`, `tracestate`
 * and `baggage` among the message headers, on protocol 1 and 2 alike.
 *
 * - `receive` (client span): a consumer takes a message from the broker, until the worker holds it (decoded,
 *   checked, queued for a slot or started). A child of the context the message carries, linked to it.
 * - `process` (consumer span): the run, a child of its message's receive span and linked to the context the
 *   message carries. A run whose receive span is not known any more is a child of that context itself.
 * - `publish` (producer span): every task message sent (retry, check again, callback, chain step, forward,
 *   dead-letter copy, a Beat entry), a child of the run that sends it; its context replaces the one the message
 *   carried, so the next receive and run continue the same trace.
 */
import {
  type Attributes,
  type Context,
  type Link,
  type Span,
  type SpanContext,
  type TextMapGetter,
  type Tracer,
  ROOT_CONTEXT,
  SpanKind,
  context,
  isSpanContextValid,
  propagation,
  trace,
} from '@opentelemetry/api';
import type { Broker, DeadLetterReason, Delivery, DeliveryHandler, OutgoingMessage } from '../broker/broker.js';
import type { TaskMessage } from '../protocol/types.js';
import { recordError, redacted } from './span-errors.js';
import type { RunEnding, Tracing } from './types.js';

type Headers = Record<string, unknown>;
type Operation = 'receive' | 'process' | 'publish';

/** The keys the W3C propagators write; a follow-up's old ones are dropped before its own are written. */
const CONTEXT_KEYS = ['traceparent', 'tracestate', 'baggage'];

/**
 * Receive spans kept for their runs. A message that is never run (revoked, parked in the delay topology, refused)
 * leaves its entry; past this many, the oldest go. The worker's prefetch window is far smaller.
 */
const RECEIPTS_KEPT = 10_000;

const getter: TextMapGetter<Headers> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => {
    const v = carrier[key];
    if (typeof v === 'string') return v;
    if (Buffer.isBuffer(v)) return v.toString('utf8');
    return Array.isArray(v) && v.every((x) => typeof x === 'string') ? v : undefined;
  },
};

/** Celery's task states, as `celery.state` (the instrumentation's attribute), from the way a run ended. */
const STATES: Record<string, string> = {
  succeeded: 'SUCCESS',
  failed: 'FAILURE',
  'timed-out': 'FAILURE',
  retried: 'RETRY',
  'retry-unpublishable': 'REJECTED',
  rejected: 'REJECTED',
  revoked: 'REVOKED',
  ignored: 'IGNORED',
};

function isTaskMessage(h: Headers): h is Headers & { task: string; id: string } {
  return typeof h.task === 'string' && typeof h.id === 'string';
}

function headersOf(delivery: Delivery): Headers {
  const h = delivery.raw.properties.headers;
  return typeof h === 'object' && h !== null && !Array.isArray(h) ? (h as Headers) : {};
}

/** The conventions link each receive and process span to the context its message carries. */
function linksTo(carried: Context): Link[] {
  const c = trace.getSpanContext(carried);
  return c && isSpanContextValid(c) ? [{ context: c }] : [];
}

function isSpan(x: Span | SpanContext): x is Span {
  return typeof (x as Partial<Span>).spanContext === 'function';
}

/** Each receive span by queue and task id until its run starts: the span while the handler runs, then its context. */
class Receipts {
  private readonly byKey = new Map<string, Span | SpanContext>();

  private static key(queue: string, id: string): string {
    return `${queue}\u0000${id}`;
  }

  open(queue: string, id: string, span: Span): void {
    const key = Receipts.key(queue, id);
    this.byKey.delete(key);
    this.byKey.set(key, span);
    if (this.byKey.size > RECEIPTS_KEPT) {
      const oldest = this.byKey.keys().next().value;
      if (oldest !== undefined) this.byKey.delete(oldest);
    }
  }

  /** The handler has returned: the span ends (unless its run began within it and ended it), its context stays. */
  close(queue: string, id: string, span: Span): void {
    if (span.isRecording()) span.end();
    const key = Receipts.key(queue, id);
    if (this.byKey.get(key) === span) this.byKey.set(key, span.spanContext());
  }

  /** The receive span of a message about to run, ended if it is still open: the worker has it now. */
  take(queue: string, id: string): SpanContext | undefined {
    const key = Receipts.key(queue, id);
    const receipt = this.byKey.get(key);
    if (receipt === undefined) return undefined;
    this.byKey.delete(key);
    if (!isSpan(receipt)) return receipt;
    if (receipt.isRecording()) receipt.end();
    return receipt.spanContext();
  }
}

export class MessagingSpans implements Pick<Tracing, 'run' | 'broker'> {
  private readonly receipts = new Receipts();

  constructor(
    private readonly tracer: Tracer,
    /** `messaging.system`: rabbitmq or redis. */
    private readonly system: string,
  ) {}

  async run<T extends RunEnding>(msg: TaskMessage, queue: string, fn: () => Promise<T>): Promise<T> {
    const carried = propagation.extract(ROOT_CONTEXT, msg.customHeaders, getter);
    const receipt = this.receipts.take(queue, msg.id);
    const parent = receipt ? trace.setSpanContext(carried, receipt) : carried;
    const span = this.tracer.startSpan(
      `process ${msg.task}`,
      {
        kind: SpanKind.CONSUMER,
        attributes: { ...this.attributes('process', queue, msg.id, msg.task), 'celery.retries': msg.retries },
        links: linksTo(carried),
      },
      parent,
    );
    try {
      const end = await context.with(trace.setSpan(parent, span), fn);
      span.setAttribute('celery.state', STATES[end.outcome.kind] ?? end.outcome.kind.toUpperCase());
      if (end.error) recordError(span, end.error);
      else if (end.outcome.kind === 'retried') span.setAttribute('celery.retry.reason', redacted(end.reason));
      return end;
    } catch (err) {
      if (err instanceof Error) recordError(span, err);
      throw err;
    } finally {
      span.end();
    }
  }

  broker(broker: Broker): Broker {
    const own: Partial<Record<PropertyKey, unknown>> = {
      consume: ((queue, handler, options) =>
        broker.consume(queue, this.receiving(queue, handler), options)) satisfies Broker['consume'],
      send: ((queue, m) => this.publishing(queue, m, {}, (x) => broker.send(queue, x))) satisfies Broker['send'],
      route: ((exchange, key, m) =>
        this.publishing(exchange, m, { 'messaging.rabbitmq.destination.routing_key': key }, (x) =>
          broker.route(exchange, key, x),
        )) satisfies Broker['route'],
      sendLater: ((queue, m, delayMs) =>
        this.publishing(queue, m, { 'celery.countdown': delayMs / 1000 }, (x) =>
          broker.sendLater(queue, x, delayMs),
        )) satisfies Broker['sendLater'],
      deadLetter: ((delivery, why) => this.deadLetter(broker, delivery, why)) satisfies Broker['deadLetter'],
    };
    const bound = new Map<PropertyKey, unknown>();
    return new Proxy(broker, {
      get(target, prop) {
        if (prop in own) return own[prop];
        const v: unknown = Reflect.get(target, prop, target);
        if (typeof v !== 'function') return v;
        let b = bound.get(prop);
        if (b === undefined) {
          b = (v as (...a: unknown[]) => unknown).bind(target);
          bound.set(prop, b);
        }
        return b;
      },
    });
  }

  private attributes(operation: Operation, destination: string, id?: string, task?: string): Attributes {
    const action = operation === 'publish' ? 'apply_async' : operation === 'process' ? 'run' : undefined;
    return {
      'messaging.system': this.system,
      'messaging.destination.name': destination,
      ...(id !== undefined ? { 'messaging.message.id': id } : {}),
      'messaging.operation': operation,
      'messaging.operation.name': operation,
      'messaging.operation.type': operation === 'publish' ? 'send' : operation,
      ...(task !== undefined ? { 'celery.task_name': task } : {}),
      ...(action !== undefined ? { 'celery.action': action } : {}),
    };
  }

  /** A consumer's handler, with a receive span around each message the broker hands it. */
  private receiving(queue: string, handler: DeliveryHandler): DeliveryHandler {
    return (delivery) => {
      const headers = headersOf(delivery);
      // Celery sets the correlation id to the task id; protocol 1 has no `id` header.
      const id = typeof headers.id === 'string' ? headers.id : delivery.raw.properties.correlationId;
      const task = typeof headers.task === 'string' ? headers.task : undefined;
      const carried = propagation.extract(ROOT_CONTEXT, headers, getter);
      const routing: Attributes =
        this.system === 'rabbitmq' ? { 'messaging.rabbitmq.destination.routing_key': delivery.routingKey } : {};
      const span = this.tracer.startSpan(
        `receive ${task ?? queue}`,
        {
          kind: SpanKind.CLIENT,
          attributes: { ...this.attributes('receive', queue, id, task), ...routing },
          links: linksTo(carried),
        },
        carried,
      );
      if (id !== undefined) this.receipts.open(queue, id, span);
      try {
        handler(delivery);
      } finally {
        if (id !== undefined) this.receipts.close(queue, id, span);
        else span.end();
      }
    };
  }

  /** Inside a run, its span; outside (a forward, a dead-letter copy, Beat), the context the message itself carries. */
  private parentOf(headers: Headers): Context {
    const active = context.active();
    return trace.getSpan(active) ? active : propagation.extract(active, headers, getter);
  }

  /** One publish of a task message: its span, and the message re-sent with that span's context in its headers. */
  private async publishing(
    destination: string,
    m: OutgoingMessage,
    extra: Attributes,
    send: (m: OutgoingMessage) => Promise<void>,
  ): Promise<void> {
    const headers = m.properties.headers;
    if (!isTaskMessage(headers)) return send(m);
    const parent = this.parentOf(headers);
    const retries = typeof headers.retries === 'number' ? { 'celery.retries': headers.retries } : {};
    // Celery's instrumentation names the same header `celery.eta`: when a countdown makes the message due.
    const eta = typeof headers.eta === 'string' ? { 'celery.eta': headers.eta } : {};
    const span = this.tracer.startSpan(
      `publish ${headers.task}`,
      {
        kind: SpanKind.PRODUCER,
        attributes: {
          ...this.attributes('publish', destination, headers.id, headers.task),
          ...retries,
          ...eta,
          ...extra,
        },
      },
      parent,
    );
    const ctx = trace.setSpan(parent, span);
    const out: Headers = { ...headers };
    for (const k of CONTEXT_KEYS) delete out[k];
    propagation.inject(ctx, out);
    try {
      await context.with(ctx, () => send({ ...m, properties: { ...m.properties, headers: out } }));
    } catch (err) {
      if (err instanceof Error) recordError(span, err);
      throw err;
    } finally {
      span.end();
    }
  }

  /** The copy is the message's exact bytes: its span records the publish, and the copy keeps the caller's context. */
  private async deadLetter(broker: Broker, delivery: Delivery, why: DeadLetterReason): Promise<void> {
    const headers = headersOf(delivery);
    if (!isTaskMessage(headers)) return broker.deadLetter(delivery, why);
    const span = this.tracer.startSpan(
      `publish ${headers.task}`,
      {
        kind: SpanKind.PRODUCER,
        attributes: {
          ...this.attributes('publish', why.queue, headers.id, headers.task),
          'celery.dead_letter.reason': redacted(why.reason),
        },
      },
      this.parentOf(headers),
    );
    try {
      await broker.deadLetter(delivery, why);
    } catch (err) {
      if (err instanceof Error) recordError(span, err);
      throw err;
    } finally {
      span.end();
    }
  }
}
