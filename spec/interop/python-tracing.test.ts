/**
 * Tracing across Python Celery and our worker: Debian's Celery 5.2 publishes with W3C trace context where
 * opentelemetry-instrumentation-celery puts it (the message headers, protocol 1 and 2), and our worker, a child
 * process with OTEL_* set, exports its spans over OTLP/HTTP (JSON) to a receiver stand-in. The run continues the
 * caller's trace, and a task that checks again with a countdown stays in that trace through every re-queue.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { AMQP_URL, deleteQueues, uniqueName } from '../support/amqp.js';
import { terminate } from '../support/child.js';
import { MYSQL } from '../support/db.js';
import { type Moto, startMoto } from '../support/moto.js';
import { type KubeStandIn, startKubeStandIn } from '../support/kube-standin.js';
import { OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.js';
import { waitFor } from '../support/wait.js';

const run = promisify(execFile);
const PYTHON = process.env.CELERY_PYTHON ?? '/usr/bin/python3';
const CONSUMER = 5;
const PRODUCER = 4;
const CLIENT = 3;

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

async function send(protocol: 1 | 2, queue: string, task: string, traceparent: string, args: unknown[], kwargs = {}) {
  const { stdout } = await run(
    PYTHON,
    [
      'spec/interop/python/traced_client.py',
      AMQP_URL,
      String(protocol),
      queue,
      task,
      traceparent,
      JSON.stringify(args),
      JSON.stringify(kwargs),
    ],
    { timeout: 60_000 },
  );
  return stdout.trim().split('\n').pop() ?? '';
}

function startWorker(
  command: string[],
  queue: string,
  endpoint: string,
  env: Record<string, string> = {},
): ChildProcess {
  return spawn(process.execPath, [...command, '-Q', queue, '-l', 'warning', '--without-mingle'], {
    env: {
      ...process.env,
      ...env,
      CELERY_BROKER_URL: AMQP_URL,
      SMARTER_WORKER_WITHOUT_MINGLE: 'true',
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
      OTEL_SERVICE_NAME: 'smarter-worker',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

const receiver = new OtlpReceiver();
let endpoint: string;
beforeAll(async () => {
  endpoint = await receiver.start();
});
afterAll(async () => receiver.stop());

const inTrace = (traceId: string) => receiver.spans.filter((s) => s.traceId === traceId);

describe('own wiring: the built worker (dist/tasks/main.js) continues a trace started in Python', () => {
  const queue = uniqueName('traced');
  let worker: ChildProcess;
  beforeAll(() => {
    worker = startWorker(['dist/tasks/main.js'], queue, endpoint);
  });
  afterAll(async () => {
    await terminate(worker);
    await deleteQueues([queue]);
  });

  test.each([1, 2] as const)(
    'protocol %s: the run is a process span, child of the caller span',
    async (protocol) => {
      const traceId = hex(16);
      const parent = hex(8);
      const id = await send(protocol, queue, 'celery.accumulate', `00-${traceId}-${parent}-01`, [1, 2]);
      const span = await waitFor(() => inTrace(traceId).find((s) => s.kind === CONSUMER), 30_000, {
        what: 'the process span',
      });
      expect(span.parentSpanId).toBe(parent);
      expect(span.name).toBe('process celery.accumulate');
      expect(span.attributes).toMatchObject({
        'messaging.system': 'rabbitmq',
        'messaging.destination.name': queue,
        'messaging.message.id': id,
        'messaging.operation': 'process',
        'celery.task_name': 'celery.accumulate',
        'celery.retries': 0,
        'celery.state': 'SUCCESS',
      });
      expect(span.resource['service.name']).toBe('smarter-worker');
    },
    60_000,
  );
});

describe('own wiring: follow-ups carry the trace (the test tasks worker)', () => {
  const queue = uniqueName('traced');
  let worker: ChildProcess;
  let moto: Moto;
  let kube: KubeStandIn;
  beforeAll(async () => {
    [moto, kube] = await Promise.all([startMoto(), startKubeStandIn()]);
    worker = startWorker(['--import', 'tsx', 'spec/support/worker-main.ts'], queue, endpoint, {
      ...moto.env,
      KUBECONFIG: kube.kubeconfig,
    });
  }, 60_000);
  afterAll(async () => {
    await terminate(worker);
    await Promise.all([moto.stop(), kube.stop()]);
    await deleteQueues([queue, `${queue}.dead_letter`]);
  });

  test('a task that checks again with a countdown three times: four runs linked in one trace', async () => {
    const traceId = hex(16);
    const parent = hex(8);
    const id = await send(2, queue, 'test.recheck', `00-${traceId}-${parent}-01`, [], { times: 3, every: 1 });
    const spans = await waitFor(
      () => {
        const s = inTrace(traceId);
        return s.filter((x) => x.kind === CONSUMER).length >= 4 && s.filter((x) => x.kind === PRODUCER).length >= 3
          ? s
          : undefined;
      },
      30_000,
      { what: 'four runs and three re-queues' },
    );
    const runs = spans.filter((s) => s.kind === CONSUMER);
    const publishes = spans.filter((s) => s.kind === PRODUCER);
    expect(runs).toHaveLength(4);
    expect(publishes).toHaveLength(3);
    // Caller → run → publish → run → publish → run → publish → run: each step the parent of the next.
    const chain: ReceivedSpan[] = [];
    let next: ReceivedSpan | undefined = runs.find((r) => r.parentSpanId === parent);
    while (next) {
      chain.push(next);
      const id: string = next.spanId;
      next = spans.find((s) => s.parentSpanId === id);
    }
    expect(chain.map((s) => s.kind)).toEqual([CONSUMER, PRODUCER, CONSUMER, PRODUCER, CONSUMER, PRODUCER, CONSUMER]);
    expect(chain[0]?.attributes['messaging.message.id']).toBe(id);
    for (const p of publishes) {
      expect(p.name).toBe('publish test.recheck');
      expect(p.attributes).toMatchObject({
        'messaging.system': 'rabbitmq',
        'messaging.destination.name': queue,
        'messaging.operation': 'publish',
        'celery.task_name': 'test.recheck',
      });
      // The countdown made each re-queue due later: its eta header.
      expect(p.attributes['celery.eta']).toMatch(/^\d{4}-\d\d-\d\dT/);
    }
    // Each re-queue is a new message: its id is the one the next run reports.
    for (let i = 1; i < chain.length - 1; i += 2) {
      expect(chain[i]?.attributes['messaging.message.id']).toBe(chain[i + 1]?.attributes['messaging.message.id']);
    }
  }, 90_000);

  test('a failed run: ERROR status, with the exception type and message', async () => {
    const traceId = hex(16);
    await send(2, queue, 'test.fail', `00-${traceId}-${hex(8)}-01`, ['no such vector store']);
    const span = await waitFor(() => inTrace(traceId).find((s) => s.kind === CONSUMER), 30_000, {
      what: 'the process span',
    });
    expect(span.attributes['celery.state']).toBe('FAILURE');
    expect(span.status.code).toBe(2);
    expect(span.events).toEqual([
      expect.objectContaining({
        name: 'exception',
        attributes: expect.objectContaining({
          'exception.type': 'ValueError',
          'exception.message': 'no such vector store',
        }) as unknown,
      }),
    ]);
  }, 60_000);

  test("a task's calls to Redis (ioredis) and over HTTP (fetch) are child spans of its run", async () => {
    const traceId = hex(16);
    await send(2, queue, 'test.outside', `00-${traceId}-${hex(8)}-01`, [], { url: `${endpoint}/ping` });
    const spans = await waitFor(
      () => {
        const s = inTrace(traceId);
        return s.length >= 3 && s.some((x) => x.kind === CONSUMER) ? s : undefined;
      },
      30_000,
      { what: 'the run and its two calls' },
    );
    const runSpan = spans.find((s) => s.kind === CONSUMER);
    const redis = spans.find(
      (s) => s.attributes['db.system'] === 'redis' || s.attributes['db.system.name'] === 'redis',
    );
    const http = spans.find((s) => s.name.startsWith('GET'));
    expect(runSpan?.attributes['celery.state']).toBe('SUCCESS');
    expect(redis?.parentSpanId).toBe(runSpan?.spanId);
    expect(http?.parentSpanId).toBe(runSpan?.spanId);
  }, 60_000);

  test("a task's calls to MySQL (mysql2) and to AWS (the SDK) are child spans of its run, with the instrumentations' attributes", async () => {
    const traceId = hex(16);
    const { host, port, user, password } = MYSQL;
    await send(2, queue, 'test.outside-db-aws', `00-${traceId}-${hex(8)}-01`, [], { host, port, user, password });
    const isMysql = (s: ReceivedSpan) => (s.attributes['db.system.name'] ?? s.attributes['db.system']) === 'mysql';
    const isAws = (s: ReceivedSpan) => s.attributes['rpc.system'] === 'aws-api';
    const spans = await waitFor(
      () => {
        const s = inTrace(traceId);
        return s.some((x) => x.kind === CONSUMER) && s.some(isMysql) && s.some(isAws) ? s : undefined;
      },
      30_000,
      { what: 'the run and its two calls' },
    );
    const runSpan = spans.find((s) => s.kind === CONSUMER);
    const db = spans.find(isMysql);
    const aws = spans.find(isAws);
    expect(runSpan?.attributes['celery.state']).toBe('SUCCESS');
    expect(db?.parentSpanId).toBe(runSpan?.spanId);
    expect(db?.kind).toBe(CLIENT);
    expect(db?.attributes['db.query.text'] ?? db?.attributes['db.statement']).toBe('SELECT 1');
    expect(db?.attributes['server.port']).toBe(port);
    // The SDK's span stands for the whole call (retries and signing included): its HTTP request is not a span of its own.
    expect(aws?.parentSpanId).toBe(runSpan?.spanId);
    expect(aws?.kind).toBe(CLIENT);
    expect(aws?.name).toBe('Route53.ListHostedZones');
    expect(aws?.attributes).toMatchObject({ 'rpc.service': 'Route53', 'rpc.method': 'ListHostedZones' });
    expect(aws?.attributes['aws.request.id']).toEqual(expect.any(String));
    expect(spans.filter((s) => s.parentSpanId === aws?.spanId)).toEqual([]);
    expect(spans.filter((s) => s.parentSpanId === runSpan?.spanId)).toHaveLength(2);
  }, 60_000);

  test("a task's Kubernetes calls (@kubernetes/client-node) are HTTP child spans of its run", async () => {
    kube.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'default', name: 'traced' }, data: {} });
    const path = '/api/v1/namespaces/default/configmaps/traced';
    const traceId = hex(16);
    await send(2, queue, 'test.outside-kube', `00-${traceId}-${hex(8)}-01`, [], {
      namespace: 'default',
      name: 'traced',
    });
    // The client fetches through node-fetch, over node:http(s): its requests are HTTP spans (discovery, then the read).
    const isGet = (path: string) => (s: ReceivedSpan) => s.attributes['url.full'] === `${kube.server}${path}`;
    const spans = await waitFor(
      () => {
        const s = inTrace(traceId);
        return s.some((x) => x.kind === CONSUMER) && s.some(isGet('/api/v1')) && s.some(isGet(path)) ? s : undefined;
      },
      30_000,
      { what: 'the run and its two requests' },
    );
    const runSpan = spans.find((s) => s.kind === CONSUMER);
    expect(runSpan?.attributes['celery.state']).toBe('SUCCESS');
    for (const request of [spans.find(isGet('/api/v1')), spans.find(isGet(path))]) {
      expect(request?.parentSpanId).toBe(runSpan?.spanId);
      expect(request?.kind).toBe(CLIENT);
      expect(request?.name).toBe('GET');
      expect(request?.attributes).toMatchObject({ 'http.request.method': 'GET', 'http.response.status_code': 200 });
    }
  }, 60_000);

  test('a message without trace context starts a new trace', async () => {
    // An invalid traceparent is as good as none: the propagator ignores it.
    const id = await send(2, queue, 'test.add', 'not-a-traceparent', [1, 2]);
    const span = await waitFor(
      () => receiver.spans.find((s) => s.kind === CONSUMER && s.attributes['messaging.message.id'] === id),
      30_000,
      { what: 'the process span' },
    );
    expect(span.parentSpanId).toBe('');
    expect(span.traceId).toMatch(/^[0-9a-f]{32}$/);
  }, 60_000);
});
