/**
 * Tracing across Python Celery and our worker: Debian's Celery 5.2 publishes with W3C trace context where
 * opentelemetry-instrumentation-celery puts it (the message headers, protocol 1 and 2), and our worker, a child
 * process with OTEL_* set, exports its spans over OTLP/HTTP (JSON) to a receiver stand-in. Each message taken from
 * the broker is a receive span, child of the caller's span, and its run a process span under it; a task that checks
 * again with a countdown stays in that trace through every re-queue. Beat's sends are publish spans whose context
 * the messages carry.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { AMQP_URL, deleteQueues, uniqueName, withChannel } from '../support/amqp.js';
import { terminate } from '../support/child.js';
import { MYSQL } from '../support/db.js';
import { type Moto, startMoto } from '../support/moto.js';
import { type KubeStandIn, startKubeStandIn } from '../support/kube-standin.js';
import { OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.js';
import { waitFor } from '../support/wait.js';
import { STAND_IN_CREDENTIALS, type SmtpStandIn, startSmtpServer } from '../support/smtp.js';
import { PYTHON } from '../support/python-worker.js';

const run = promisify(execFile);
const CONSUMER = 5;
const PRODUCER = 4;
const CLIENT = 3;
const isReceive = (s: ReceivedSpan) => s.kind === CLIENT && s.attributes['messaging.operation'] === 'receive';

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

/** The trace's spans once its run and a span of each of `calls` have arrived: the spans, the run's, each call's. */
async function runAndCalls(traceId: string, calls: Array<(s: ReceivedSpan) => boolean>, what: string) {
  const spans = await waitFor(
    () => {
      const s = inTrace(traceId);
      return s.some((x) => x.kind === CONSUMER) && calls.every((c) => s.some(c)) ? s : undefined;
    },
    30_000,
    { what },
  );
  return { spans, run: spans.find((s) => s.kind === CONSUMER), calls: calls.map((c) => spans.find(c)) };
}

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
    'protocol %s: the message is a receive span, child of the caller span; its run a process span under it',
    async (protocol) => {
      const traceId = hex(16);
      const parent = hex(8);
      const id = await send(protocol, queue, 'celery.accumulate', `00-${traceId}-${parent}-01`, [1, 2]);
      const { receive, span } = await waitFor(
        () => {
          const s = inTrace(traceId);
          const r = s.find(isReceive);
          const p = s.find((x) => x.kind === CONSUMER);
          return r && p ? { receive: r, span: p } : undefined;
        },
        30_000,
        { what: 'the receive and process spans' },
      );
      // Protocol 1 names its task in the body only: its receive span is named after the queue.
      expect(receive.name).toBe(protocol === 2 ? 'receive celery.accumulate' : `receive ${queue}`);
      expect(receive.parentSpanId).toBe(parent);
      expect(receive.links).toEqual([{ traceId, spanId: parent }]);
      expect(receive.attributes).toMatchObject({
        'messaging.system': 'rabbitmq',
        'messaging.destination.name': queue,
        'messaging.message.id': id,
        'messaging.operation': 'receive',
        'messaging.operation.type': 'receive',
      });
      // The worker has the message once its run starts: the receive span has ended by then (the SDK takes a span's
      // start from Date.now(), whole milliseconds, and its end from the monotonic clock: 1 ms apart at most).
      expect(receive.endUs).toBeLessThanOrEqual(span.startUs + 1000);
      expect(span.parentSpanId).toBe(receive.spanId);
      expect(span.links).toEqual([{ traceId, spanId: parent }]);
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
        return s.filter((x) => x.kind === CONSUMER).length >= 4 &&
          s.filter(isReceive).length >= 4 &&
          s.filter((x) => x.kind === PRODUCER).length >= 3
          ? s
          : undefined;
      },
      30_000,
      { what: 'four receives, four runs and three re-queues' },
    );
    const runs = spans.filter((s) => s.kind === CONSUMER);
    const publishes = spans.filter((s) => s.kind === PRODUCER);
    expect(runs).toHaveLength(4);
    expect(spans.filter(isReceive)).toHaveLength(4);
    expect(publishes).toHaveLength(3);
    // Caller → receive → run → publish → receive → run → …: each step the parent of the next.
    const chain: ReceivedSpan[] = [];
    let next: ReceivedSpan | undefined = spans.find((r) => r.parentSpanId === parent);
    while (next) {
      chain.push(next);
      const id: string = next.spanId;
      next = spans.find((s) => s.parentSpanId === id);
    }
    const hop = [CLIENT, CONSUMER, PRODUCER];
    expect(chain.map((s) => s.kind)).toEqual([...hop, ...hop, ...hop, CLIENT, CONSUMER]);
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
    // Each re-queue is a new message: its id is the one its receive and its run report, and both link to its publish.
    for (let i = 2; i < chain.length - 2; i += 3) {
      const [publish, receive, processed] = [chain[i], chain[i + 1], chain[i + 2]];
      const messageId = publish?.attributes['messaging.message.id'];
      expect(receive?.attributes['messaging.message.id']).toBe(messageId);
      expect(processed?.attributes['messaging.message.id']).toBe(messageId);
      expect(receive?.links).toEqual([{ traceId, spanId: publish?.spanId }]);
      expect(processed?.links).toEqual([{ traceId, spanId: publish?.spanId }]);
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
    const isRedis = (s: ReceivedSpan) => (s.attributes['db.system.name'] ?? s.attributes['db.system']) === 'redis';
    const isGet = (s: ReceivedSpan) => s.name.startsWith('GET');
    const {
      run: runSpan,
      calls: [redis, http],
    } = await runAndCalls(traceId, [isRedis, isGet], 'the run and its two calls');
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
    const {
      spans,
      run: runSpan,
      calls: [db, aws],
    } = await runAndCalls(traceId, [isMysql, isAws], 'the run and its two calls');
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
    const { run: runSpan, calls: requests } = await runAndCalls(
      traceId,
      [isGet('/api/v1'), isGet(path)],
      'the run and its two requests',
    );
    expect(runSpan?.attributes['celery.state']).toBe('SUCCESS');
    for (const request of requests) {
      expect(request?.parentSpanId).toBe(runSpan?.spanId);
      expect(request?.kind).toBe(CLIENT);
      expect(request?.name).toBe('GET');
      expect(request?.attributes).toMatchObject({ 'http.request.method': 'GET', 'http.response.status_code': 200 });
    }
  }, 60_000);

  test('a message without trace context starts a new trace at its receive span', async () => {
    // An invalid traceparent is as good as none: the propagator ignores it.
    const id = await send(2, queue, 'test.add', 'not-a-traceparent', [1, 2]);
    const ofMessage = (s: ReceivedSpan) => s.attributes['messaging.message.id'] === id;
    const { receive, span } = await waitFor(
      () => {
        const r = receiver.spans.find((s) => isReceive(s) && ofMessage(s));
        const p = receiver.spans.find((s) => s.kind === CONSUMER && ofMessage(s));
        return r && p ? { receive: r, span: p } : undefined;
      },
      30_000,
      { what: 'the receive and process spans' },
    );
    expect(receive.parentSpanId).toBe('');
    expect(receive.links).toEqual([]);
    expect(receive.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(span.traceId).toBe(receive.traceId);
    expect(span.parentSpanId).toBe(receive.spanId);
  }, 60_000);

  test("a task's e-mail (SMTP through nodemailer) is a client span of its run, with the server", async () => {
    const smtp: SmtpStandIn = await startSmtpServer();
    try {
      const traceId = hex(16);
      const { user, pass } = STAND_IN_CREDENTIALS;
      await send(2, queue, 'test.outside-smtp', `00-${traceId}-${hex(8)}-01`, [], {
        host: smtp.host,
        port: smtp.port,
        user,
        password: pass,
      });
      const isSmtp = (s: ReceivedSpan) => s.name === 'smtp send';
      const spans = await waitFor(
        () => {
          const s = inTrace(traceId);
          return s.some((x) => x.kind === CONSUMER) && s.some(isSmtp) ? s : undefined;
        },
        30_000,
        { what: 'the run and its e-mail' },
      );
      const runSpan = spans.find((s) => s.kind === CONSUMER);
      const mail = spans.find(isSmtp);
      expect(runSpan?.attributes['celery.state']).toBe('SUCCESS');
      expect(mail?.parentSpanId).toBe(runSpan?.spanId);
      expect(mail?.kind).toBe(CLIENT);
      expect(mail?.attributes).toEqual({
        'server.address': smtp.host,
        'server.port': smtp.port,
        'network.protocol.name': 'smtp',
      });
      expect(smtp.messages.map((m) => m.subject)).toEqual(['traced']);
    } finally {
      await smtp.stop();
    }
  }, 60_000);
});

describe('own wiring: the built Beat (dist/beat/main.js) traces its sends', () => {
  const id = uniqueName('traced_beat');
  const queues = [`${id}_op`, `${id}_infra`];
  const dir = mkdtempSync(join(tmpdir(), 'traced-beat-'));
  let beat: ChildProcess;
  // Two operational entries last ran long ago: due at once (an entry new to the file first waits its interval).
  const due = ['aggregate-charges', 'refresh-mcpclients'];
  beforeAll(() => {
    const long = { last_run_at: '2000-01-01T00:00:00Z', total_run_count: 1 };
    writeFileSync(
      join(dir, 'schedule.json'),
      JSON.stringify({ version: 1, entries: Object.fromEntries(due.map((name) => [name, long])) }),
    );
    beat = spawn(process.execPath, ['dist/beat/main.js'], {
      env: {
        ...process.env,
        CELERY_BROKER_URL: AMQP_URL,
        SMARTER_BEAT_SCHEDULE_FILE: join(dir, 'schedule.json'),
        SMARTER_BEAT_LOCK: `${id}_lock`,
        SMARTER_BEAT_REDIS_URL: '',
        CELERY_REDBEAT_REDIS_URL: '',
        SMARTER_LLM_CLIENT_TASKS_CELERY_TASK_QUEUE: queues[0],
        SMARTER_INFRASTRUCTURE_TASKS_CELERY_TASK_QUEUE: queues[1],
        OTEL_TRACES_EXPORTER: 'otlp',
        OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_BSP_SCHEDULE_DELAY: '100',
        OTEL_SERVICE_NAME: 'smarter-beat',
      },
      stdio: 'ignore',
    });
  });
  afterAll(async () => {
    await terminate(beat);
    await deleteQueues(queues);
    rmSync(dir, { recursive: true, force: true });
  });

  test('each send is a publish span, a trace of its own, whose context its message carries', async () => {
    const fromBeat = (s: ReceivedSpan) => s.resource['service.name'] === 'smarter-beat' && s.kind === PRODUCER;
    const toOp = (s: ReceivedSpan) => fromBeat(s) && s.attributes['messaging.destination.name'] === queues[0];
    await waitFor(() => (receiver.spans.filter(toOp).length >= due.length ? true : undefined), 30_000, {
      what: 'two publish spans',
    });
    const sent = await withChannel(async (ch) => {
      const got: Array<{ id: string; traceparent: string }> = [];
      for (;;) {
        const m = await ch.get(queues[0] ?? '', { noAck: true });
        if (m === false) return got;
        const h = m.properties.headers as Record<string, unknown>;
        got.push({ id: String(h.id), traceparent: String(h.traceparent) });
      }
    });
    expect(sent).toHaveLength(due.length);
    for (const { id: taskId, traceparent } of sent) {
      const span = receiver.spans.find((s) => toOp(s) && s.attributes['messaging.message.id'] === taskId);
      expect(span?.parentSpanId).toBe('');
      expect(span?.name).toMatch(/^publish smarter\.apps\./);
      expect(span?.attributes).toMatchObject({ 'messaging.system': 'rabbitmq', 'messaging.operation': 'publish' });
      expect(traceparent).toBe(`00-${span?.traceId}-${span?.spanId}-01`);
    }
  }, 60_000);
});
