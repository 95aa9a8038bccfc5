/**
 * Tracing with the OpenTelemetry SDK, loaded only when tracing is on (`tracing.ts`). The trace context travels
 * where Celery's own instrumentation (`opentelemetry-instrumentation-celery`) puts it: W3C `traceparent`,
 * `tracestate` and `baggage` among the message headers, on protocol 1 and 2 alike. A run is a `process` span
 * child of that context; every task message the worker sends (retry, check again, callback, chain step,
 * forward) is a `publish` span child of the run, whose context replaces the one the message carried, so the
 * next run continues the same trace.
 */
import { createRequire, syncBuiltinESMExports } from 'node:module';
import {
  type Attributes,
  type Context,
  type Span,
  type TextMapGetter,
  DiagLogLevel,
  ROOT_CONTEXT,
  diag,
  isSpanContextValid,
  SpanKind,
  SpanStatusCode,
  context,
  propagation,
  trace,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { AwsInstrumentation } from '@opentelemetry/instrumentation-aws-sdk';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { MySQL2Instrumentation } from '@opentelemetry/instrumentation-mysql2';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { defaultResource, detectResources, envDetector, hostDetector, processDetector } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  type SpanExporter,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { exceptionInfo } from '../backend/meta.js';
import type { Broker, OutgoingMessage } from '../broker/broker.js';
import { redactUrl } from '../config/settings.js';
import { type Logger, setLineFields } from '../logger.js';
import type { TaskMessage } from '../protocol/types.js';
import { type SamplerSetting, otlpProtocol, samplerSetting, scheduleDelayMs } from './env.js';
import type { RunEnding, Tracing } from './tracing.js';

type Env = Readonly<Record<string, string | undefined>>;
type Headers = Record<string, unknown>;

/** The keys the W3C propagators write; a follow-up's old ones are dropped before its own are written. */
const CONTEXT_KEYS = ['traceparent', 'tracestate', 'baggage'];

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

function sampler(s: SamplerSetting): Sampler {
  const root =
    s.ratio >= 1
      ? new AlwaysOnSampler()
      : s.ratio <= 0
        ? new AlwaysOffSampler()
        : new TraceIdRatioBasedSampler(s.ratio);
  return s.parentBased ? new ParentBasedSampler({ root }) : root;
}

/** The exporter the protocol names; each reads the endpoint, headers and timeout from the `OTEL_EXPORTER_OTLP_*` variables. */
async function exporter(env: Env): Promise<SpanExporter> {
  if (otlpProtocol(env) === 'http/json') {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
    return new OTLPTraceExporter();
  }
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-proto');
  return new OTLPTraceExporter();
}

/**
 * The maintained instrumentations of the outside systems tasks call: AWS SDK, HTTP (node:http, and fetch through
 * undici), MySQL and Redis. Spans only under a run: the broker's own Redis polling and the health endpoint stay
 * out of traces. Not amqplib's: the worker's own spans describe its messages, and that one would rewrite them.
 */
function instrument(): void {
  registerInstrumentations({
    instrumentations: [
      new AwsInstrumentation({ suppressInternalInstrumentation: true }),
      new HttpInstrumentation({ disableIncomingRequestInstrumentation: true, requireParentforOutgoingSpans: true }),
      new UndiciInstrumentation({ requireParentforSpans: true }),
      new IORedisInstrumentation({ requireParentSpan: true }),
      new MySQL2Instrumentation(),
    ],
  });
  // The instrumentations patch a module as it is required. node:http, mysql2, ioredis and the AWS SDK's client
  // base (`@smithy/core/client`, whose `Client.prototype.send` the AWS instrumentation wraps; Node resolves it to
  // the CommonJS build for `import` too) may be reached through `import` (or be loaded already), which their hook
  // does not see: required once here, they are patched in place (their prototypes, shared with every import)
  // before any task uses them. Without it, an AWS call is only the HTTP request under it.
  const require = createRequire(import.meta.url);
  for (const name of ['node:http', 'node:https', 'mysql2', 'ioredis', '@smithy/core/client']) {
    try {
      require(name);
    } catch {
      // Not installed: nothing of it to trace.
    }
  }
  syncBuiltinESMExports();
}

/** An exception message in a span: a password in a URL is hidden, as in the logs. */
function redacted(message: string): string {
  return message
    .split(/(\s+)/)
    .map((part) => (part.includes('://') ? redactUrl(part) : part))
    .join('');
}

function recordError(span: Span, err: Error): void {
  const info = exceptionInfo(err);
  const message = redacted(err.message);
  span.recordException({ name: info.exc_type, message });
  span.setStatus({ code: SpanStatusCode.ERROR, message: `${info.exc_type}: ${message}` });
}

function isTaskMessage(h: Headers): h is Headers & { task: string; id: string } {
  return typeof h.task === 'string' && typeof h.id === 'string';
}

export async function startOtel(o: { env: Env; system: string; logger: Logger }): Promise<Tracing> {
  const { env, system, logger } = o;
  const setting = samplerSetting(env);
  const delay = scheduleDelayMs(env);
  const resource = defaultResource().merge(
    detectResources({ detectors: [envDetector, processDetector, hostDetector] }),
  );
  const provider = new TracerProvider({
    resource,
    sampler: sampler(setting),
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: await exporter(env),
        ...(delay !== undefined ? { scheduledDelayMillis: delay } : {}),
      }),
    ],
  });
  // The SDK's own troubles (an exporter that cannot reach its collector) in the worker's log.
  diag.setLogger(
    {
      error: (m) => logger.error(`opentelemetry: ${m}`),
      warn: (m) => logger.warn(`opentelemetry: ${m}`),
      info: (m) => logger.info(`opentelemetry: ${m}`),
      debug: (m) => logger.debug(`opentelemetry: ${m}`),
      verbose: (m) => logger.debug(`opentelemetry: ${m}`),
    },
    env.OTEL_LOG_LEVEL?.trim().toLowerCase() === 'debug' ? DiagLogLevel.DEBUG : DiagLogLevel.WARN,
  );
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(
    new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }),
  );
  trace.setGlobalTracerProvider(provider);
  instrument();
  const tracer = provider.getTracer('smarter-worker');
  setLineFields(() => {
    const span = trace.getActiveSpan();
    if (!span) return undefined;
    const c = span.spanContext();
    return isSpanContextValid(c) ? { trace_id: c.traceId, span_id: c.spanId } : undefined;
  });

  const messaging = (operation: 'process' | 'publish', destination: string, id: string, task: string): Attributes => ({
    'messaging.system': system,
    'messaging.destination.name': destination,
    'messaging.message.id': id,
    'messaging.operation': operation,
    'messaging.operation.name': operation,
    'messaging.operation.type': operation === 'publish' ? 'send' : 'process',
    'celery.task_name': task,
    'celery.action': operation === 'publish' ? 'apply_async' : 'run',
  });

  /** Inside a run, its span; outside (a forward, a dead-letter copy), the context the message itself carries. */
  const parentOf = (headers: Headers): Context => {
    const active = context.active();
    return trace.getSpan(active) ? active : propagation.extract(active, headers, getter);
  };

  /** One publish of a task message: its span, and the message re-sent with that span's context in its headers. */
  const publishing = async (
    destination: string,
    m: OutgoingMessage,
    extra: Attributes,
    send: (m: OutgoingMessage) => Promise<void>,
  ): Promise<void> => {
    const headers = m.properties.headers;
    if (!isTaskMessage(headers)) return send(m);
    const parent = parentOf(headers);
    const retries = typeof headers.retries === 'number' ? { 'celery.retries': headers.retries } : {};
    // Celery's instrumentation names the same header `celery.eta`: when a countdown makes the message due.
    const eta = typeof headers.eta === 'string' ? { 'celery.eta': headers.eta } : {};
    const span = tracer.startSpan(
      `publish ${headers.task}`,
      {
        kind: SpanKind.PRODUCER,
        attributes: { ...messaging('publish', destination, headers.id, headers.task), ...retries, ...eta, ...extra },
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
  };

  const tracedBroker = (broker: Broker): Broker => {
    const send: Broker['send'] = (queue, m) => publishing(queue, m, {}, (x) => broker.send(queue, x));
    const route: Broker['route'] = (exchange, key, m) =>
      publishing(exchange, m, { 'messaging.rabbitmq.destination.routing_key': key }, (x) =>
        broker.route(exchange, key, x),
      );
    const sendLater: Broker['sendLater'] = (queue, m, delayMs) =>
      publishing(queue, m, { 'celery.countdown': delayMs / 1000 }, (x) => broker.sendLater(queue, x, delayMs));
    // The copy is the message's exact bytes: its span records the publish, and the copy keeps the caller's context.
    const deadLetter: Broker['deadLetter'] = async (delivery, why) => {
      const headers = (delivery.raw.properties.headers ?? {}) as Headers;
      if (!isTaskMessage(headers)) return broker.deadLetter(delivery, why);
      const span = tracer.startSpan(
        `publish ${headers.task}`,
        {
          kind: SpanKind.PRODUCER,
          attributes: {
            ...messaging('publish', why.queue, headers.id, headers.task),
            'celery.dead_letter.reason': redacted(why.reason),
          },
        },
        parentOf(headers),
      );
      try {
        await broker.deadLetter(delivery, why);
      } catch (err) {
        if (err instanceof Error) recordError(span, err);
        throw err;
      } finally {
        span.end();
      }
    };
    const own: Partial<Record<PropertyKey, unknown>> = { send, route, sendLater, deadLetter };
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
  };

  const run = async <T extends RunEnding>(msg: TaskMessage, queue: string, fn: () => Promise<T>): Promise<T> => {
    const parent = propagation.extract(ROOT_CONTEXT, msg.customHeaders, getter);
    const span = tracer.startSpan(
      `process ${msg.task}`,
      {
        kind: SpanKind.CONSUMER,
        attributes: { ...messaging('process', queue, msg.id, msg.task), 'celery.retries': msg.retries },
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
  };

  logger.info('tracing on: OpenTelemetry spans exported over OTLP', {
    sampler: env.OTEL_TRACES_SAMPLER ?? 'parentbased_always_on',
    protocol: otlpProtocol(env),
  });
  return {
    run,
    broker: tracedBroker,
    shutdown: async () => {
      setLineFields(undefined);
      await provider.shutdown();
    },
  };
}
