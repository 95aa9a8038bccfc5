/**
 * Tracing with the OpenTelemetry SDK, loaded only when tracing is on (`tracing.ts`): the provider, its sampler
 * and OTLP exporter from the `OTEL_*` variables, the W3C propagators, the maintained instrumentations of the
 * outside systems tasks call, and log lines that name their span. The messages' spans are `messaging.ts`'s.
 */
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { DiagLogLevel, SpanKind, context, diag, isSpanContextValid, propagation, trace } from '@opentelemetry/api';
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
import { type Logger, setLineFields } from '../logger.js';
import { type SamplerSetting, otlpProtocol, samplerSetting, scheduleDelayMs } from './env.js';
import { MessagingSpans } from './messaging.js';
import { recordError } from './span-errors.js';
import type { SpanAttributes, Tracing } from './types.js';

type Env = Readonly<Record<string, string | undefined>>;

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

  const client = async <T>(name: string, attributes: SpanAttributes, fn: () => Promise<T>): Promise<T> => {
    const span = tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes });
    try {
      return await context.with(trace.setSpan(context.active(), span), fn);
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
  const messages = new MessagingSpans(tracer, system);
  return {
    run: (msg, queue, fn) => messages.run(msg, queue, fn),
    broker: (broker) => messages.broker(broker),
    client,
    shutdown: async () => {
      setLineFields(undefined);
      await provider.shutdown();
    },
  };
}
