/**
 * The receive span of each message and its run's process span under it (lib/tracing/messaging.ts), with the SDK
 * exporting to memory and a broker stand-in that only hands over deliveries: no network. Covers what the interop
 * test cannot reach cheaply: a run whose receive span was forgotten (more messages received and not run than are
 * kept) is a child of its message's context instead.
 */
import { ROOT_CONTEXT, context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import type { Broker, Delivery, DeliveryHandler } from '../../lib/broker/broker.js';
import type { TaskMessage } from '../../lib/protocol/types.js';
import { MessagingSpans } from '../../lib/tracing/messaging.js';

const exporter = new InMemorySpanExporter();
const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
propagation.setGlobalPropagator(new W3CTraceContextPropagator());
afterAll(async () => {
  await provider.shutdown();
  context.disable();
  propagation.disable();
});

const TRACE = '0af7651916cd43dd8448eb211c80319c';
const CALLER = 'b7ad6b7169203331';
const QUEUE = 'q';

function delivery(id: string): Delivery {
  const headers = { id, task: 't.add', traceparent: `00-${TRACE}-${CALLER}-01` };
  return {
    raw: { body: Buffer.alloc(0), properties: { headers, correlationId: id } },
    queue: QUEUE,
    routingKey: QUEUE,
  } as unknown as Delivery;
}

function message(id: string): TaskMessage {
  return {
    id,
    task: 't.add',
    retries: 0,
    customHeaders: { traceparent: `00-${TRACE}-${CALLER}-01` },
  } as unknown as TaskMessage;
}

/** A broker that keeps its consumer's handler, to hand it deliveries. */
function consumed(spans: MessagingSpans): Promise<DeliveryHandler> {
  return new Promise((resolve) => {
    const stub = { consume: (_q: string, h: DeliveryHandler) => Promise.resolve(resolve(h)) } as unknown as Broker;
    void spans.broker(stub).consume(QUEUE, () => undefined);
  });
}

const ran = { outcome: { kind: 'succeeded' }, reason: '' };
const named = (name: string, id: string) => (s: ReadableSpan) =>
  s.name === name && s.attributes['messaging.message.id'] === id;

describe('own wiring: receive and process spans of the messages a consumer takes', () => {
  beforeEach(() => exporter.reset());

  test('the run is a child of its receive span, which is a child of the caller; both link to the caller', async () => {
    const spans = new MessagingSpans(provider.getTracer('test'), 'rabbitmq');
    const handle = await consumed(spans);
    handle(delivery('a'));
    await spans.run(message('a'), QUEUE, () => Promise.resolve(ran));
    const done = exporter.getFinishedSpans();
    const receive = done.find(named('receive t.add', 'a'));
    const run = done.find(named('process t.add', 'a'));
    expect(receive?.parentSpanContext?.spanId).toBe(CALLER);
    expect(run?.parentSpanContext?.spanId).toBe(receive?.spanContext().spanId);
    expect(run?.spanContext().traceId).toBe(TRACE);
    for (const s of [receive, run]) expect(s?.links.map((l) => l.context.spanId)).toEqual([CALLER]);
  });

  test('a run that starts within the handler ends the receive span first', async () => {
    const spans = new MessagingSpans(provider.getTracer('test'), 'rabbitmq');
    const stub = {
      consume: (_q: string, h: DeliveryHandler) => {
        h(delivery('b'));
        return Promise.resolve();
      },
    } as unknown as Broker;
    let running: Promise<unknown> = Promise.resolve();
    await spans.broker(stub).consume(QUEUE, () => {
      running = spans.run(message('b'), QUEUE, () => {
        expect(exporter.getFinishedSpans().some(named('receive t.add', 'b'))).toBe(true);
        return Promise.resolve(ran);
      });
    });
    await running;
    expect(exporter.getFinishedSpans().filter(named('receive t.add', 'b'))).toHaveLength(1);
  });

  test('past 10,000 messages received and not run, the oldest receive is forgotten: its run is a child of the caller', async () => {
    const spans = new MessagingSpans(provider.getTracer('test'), 'rabbitmq');
    const handle = await consumed(spans);
    handle(delivery('first'));
    for (let i = 0; i < 10_000; i++) handle(delivery(`never-run-${i}`));
    handle(delivery('last'));
    await context.with(ROOT_CONTEXT, () => spans.run(message('first'), QUEUE, () => Promise.resolve(ran)));
    await spans.run(message('last'), QUEUE, () => Promise.resolve(ran));
    const done = exporter.getFinishedSpans();
    expect(done.find(named('process t.add', 'first'))?.parentSpanContext?.spanId).toBe(CALLER);
    const last = done.find(named('receive t.add', 'last'));
    expect(done.find(named('process t.add', 'last'))?.parentSpanContext?.spanId).toBe(last?.spanContext().spanId);
    expect(trace.getActiveSpan()).toBeUndefined();
  });
});
