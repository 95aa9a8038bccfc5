/** What we store, reply and emit, against the golden Celery 5.6 fixtures. */
import { exceptionInfo, kvMeta, rpcBody } from '../../lib/backend/meta.js';
import type { Broker, OutgoingMessage } from '../../lib/broker/broker.js';
import { LamportClock } from '../../lib/control/clock.js';
import { EventDispatcher } from '../../lib/control/events.js';
import { subscriptionTopology } from '../../lib/broker/amqp/topology.js';
import { activeQueueInfo } from '../../lib/control/commands.js';
import { pidboxExchange, pidboxSubscription } from '../../lib/control/pidbox.js';
import {
  MaxRetriesExceededError,
  NotRegisteredError,
  PythonException,
  SoftTimeLimitExceededError,
  TaskRevokedError,
  TimeLimitExceededError,
} from '../../lib/errors.js';
import { nullLogger } from '../../lib/logger.js';
import type { PublishProperties } from '../../lib/protocol/encode.js';
import { parseKombuJson, stringifyKombuJson } from '../../lib/protocol/json.js';
import type { TaskMessage } from '../../lib/protocol/types.js';
import { loadFixture } from '../support/fixtures.js';

const body = (name: string) => parseKombuJson(loadFixture(name).body_text ?? '') as Record<string, unknown>;

/** The worker's event dispatcher with task events on, as `celery@workerhost` with nothing active, sending on `broker`. */
const taskEventsOn = (broker: Broker) =>
  new EventDispatcher(broker, 'celery@workerhost', new LamportClock(), nullLogger(), { taskEvents: true }, () => ({
    active: 0,
    processed: 0,
  }));

test('redis SUCCESS meta: same keys in the same order, date_done an aware ISO time', () => {
  const golden = body('result-kv-success.json');
  const ours = kvMeta({
    taskId: 'aaaaaaaa-0000-0000-0000-000000000001',
    state: 'SUCCESS',
    result: 5,
    traceback: null,
    children: [],
  });
  expect(Object.keys(ours)).toEqual(Object.keys(golden));
  expect({ ...ours, date_done: 'x' }).toEqual({ ...golden, date_done: 'x' });
  expect(ours.date_done).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?\+00:00$/);
});

test.each([
  {
    name: 'redis STARTED meta is byte-identical',
    fixture: 'result-kv-started.json',
    ours: () =>
      kvMeta({
        taskId: 's1',
        state: 'STARTED',
        result: { pid: 123, hostname: 'celery@h' },
        traceback: null,
        children: null,
      }),
  },
  {
    name: 'rpc SUCCESS body is byte-identical (released Celery: no date_done)',
    fixture: 'result-rpc-success.json',
    ours: () =>
      rpcBody({
        taskId: 'aaaaaaaa-0000-0000-0000-000000000001',
        state: 'SUCCESS',
        result: 5,
        traceback: null,
        children: [],
      }),
  },
])('$name', ({ fixture, ours }) => {
  expect(stringifyKombuJson(ours())).toBe(loadFixture(fixture).body_text);
});

test('redis FAILURE meta carries the exception dict Python re-raises', () => {
  const golden = body('result-kv-failure.json');
  const err = Object.assign(new Error('missing'), { name: 'KeyError' });
  const ours = kvMeta({
    taskId: 'aaaaaaaa-0000-0000-0000-000000000003',
    state: 'FAILURE',
    result: { exc_type: 'KeyError', exc_message: ['missing'], exc_module: 'builtins' },
    traceback: 't',
    children: [],
  });
  expect(Object.keys(ours)).toEqual(Object.keys(golden));
  expect(ours.result).toEqual(golden.result);
  expect(exceptionInfo(err)).toEqual({ exc_type: 'KeyError', exc_message: ['missing'], exc_module: null });
});

test('the exception dicts match prepare_exception for every golden case', () => {
  const cases = loadFixture('exception-dicts.json').cases as Array<{ case: string; exception: unknown }>;
  const ours: Record<string, unknown> = {
    'hard time limit': exceptionInfo(new TimeLimitExceededError(300)),
    'soft time limit (uncaught)': exceptionInfo(new SoftTimeLimitExceededError(1)),
    revoked: exceptionInfo(new TaskRevokedError('revoked')),
    'unknown task': exceptionInfo(new NotRegisteredError('proj.tasks.nope')),
    'max retries': exceptionInfo(new MaxRetriesExceededError("Can't retry proj.tasks.flaky[id] args:(1,) kwargs:{}")),
  };
  for (const c of cases.filter((x) => x.case in ours)) expect(ours[c.case]).toEqual(c.exception);
  expect(Object.keys(ours).length).toBe(5);
});

test('the pidbox queue is declared as Celery declares it', () => {
  const d = loadFixture('pidbox-queue-declare.json').declaration as {
    exchange: { name: string; type: string; durable: boolean };
    queue: { durable: boolean; auto_delete: boolean; arguments: Record<string, number> };
  };
  const t = subscriptionTopology(pidboxExchange, pidboxSubscription('celery@h'));
  expect(t.exchanges[0]).toMatchObject({ name: d.exchange.name, type: d.exchange.type, durable: d.exchange.durable });
  expect(t.queues[0]).toEqual({
    name: 'celery@h.celery.pidbox',
    durable: d.queue.durable,
    autoDelete: d.queue.auto_delete,
    arguments: d.queue.arguments,
  });
});

test('an active_queues item is the golden one', () => {
  expect(activeQueueInfo('celery')).toEqual(body('pidbox-active-queues-item.json'));
});

test('a task-received event has the golden keys in the golden order, on celeryev with the hostname header', () => {
  const sent: Array<{ exchange: string; key: string; body: Buffer; p: PublishProperties }> = [];
  const broker = {
    route: async (exchange: string, key: string, m: OutgoingMessage) =>
      void sent.push({ exchange, key, body: m.body, p: m.properties }),
  } as unknown as Broker;
  const events = taskEventsOn(broker);
  const msg = {
    id: 't1',
    task: 'proj.tasks.add',
    argsrepr: '(2, 2)',
    kwargsrepr: '{}',
    rootId: 't1',
    parentId: null,
    retries: 0,
    eta: null,
    expires: null,
  } as unknown as TaskMessage;
  events.received(msg);
  events.flush();
  const golden = loadFixture('event-task-received.json');
  // Buffered as Celery's worker buffers task events under its event loop (celery/events/dispatcher.py): a list.
  const [ours] = parseKombuJson(sent[0]?.body.toString() ?? '') as Array<Record<string, unknown>>;
  const want = parseKombuJson(golden.body_text ?? '') as Record<string, unknown>;
  expect(Object.keys(ours ?? {})).toEqual(Object.keys(want));
  expect({ ...ours, pid: 0, timestamp: 0, utcoffset: 0 }).toEqual({ ...want, pid: 0, timestamp: 0, utcoffset: 0 });
  expect(sent[0]).toMatchObject({
    exchange: 'celeryev',
    key: 'task.multi',
    p: { headers: golden.headers, deliveryMode: 1 },
  });
});

test('task events leave as one task.multi list of up to 24, in order, on the next turn of the event loop or when full; worker events alone', async () => {
  const sent: Array<{ key: string; body: unknown }> = [];
  const broker = {
    route: async (_e: string, key: string, m: OutgoingMessage) =>
      void sent.push({ key, body: parseKombuJson(m.body.toString()) }),
  } as unknown as Broker;
  const events = taskEventsOn(broker);
  const msg = (i: number) => ({ id: `t${i}`, task: 'proj.tasks.add' }) as unknown as TaskMessage;
  for (let i = 0; i < 30; i++) events.started(msg(i));
  events.heartbeatNow();
  expect(sent.map((s) => s.key)).toEqual(['task.multi', 'worker.heartbeat']);
  await new Promise((r) => setImmediate(r));
  expect(sent.map((s) => s.key)).toEqual(['task.multi', 'worker.heartbeat', 'task.multi']);
  const lists = sent.filter((s) => s.key === 'task.multi').map((s) => s.body as Array<Record<string, unknown>>);
  expect(lists.map((l) => l.length)).toEqual([24, 6]);
  expect(lists.flat().map((e) => e.uuid)).toEqual(Array.from({ length: 30 }, (_, i) => `t${i}`));
  const clocks = lists.flat().map((e) => Number(e.clock));
  expect(clocks).toEqual([...clocks].sort((a, b) => a - b));
  events.stopHeartbeat();
  expect(sent.at(-1)?.key).toBe('worker.offline');
});

test('a task event buffered when the worker stops its heartbeat leaves before worker-offline', () => {
  const keys: string[] = [];
  const broker = { route: async (_e: string, key: string) => void keys.push(key) } as unknown as Broker;
  const events = taskEventsOn(broker);
  events.started({ id: 't1', task: 'proj.tasks.add' } as unknown as TaskMessage);
  events.stopHeartbeat();
  expect(keys).toEqual(['task.multi', 'worker.offline']);
});

test('task-failed and task-retried carry the Python exception a caller would catch, as Celery repr()s it', () => {
  const sent: Buffer[] = [];
  const broker = {
    route: async (_e: string, _k: string, m: OutgoingMessage) => void sent.push(m.body),
  } as unknown as Broker;
  const events = taskEventsOn(broker);
  const msg = { id: 't1', task: 'proj.tasks.add' } as unknown as TaskMessage;
  events.failed(msg, new PythonException('ValueError', 'builtins', 'boom'), '');
  events.retried(msg, new RangeError("it's out"), '');
  events.failed(msg, new NotRegisteredError('proj.tasks.nope'), '');
  events.flush();
  const exceptions = sent.flatMap((b) =>
    (parseKombuJson(b.toString()) as Array<Record<string, unknown>>).map((e) => e.exception),
  );
  expect(exceptions).toEqual(["ValueError('boom')", 'ValueError("it\'s out")', "NotRegistered('proj.tasks.nope')"]);
});
