/**
 * Real Python Celery (Debian's python3-celery 5.2) sends to our worker over real RabbitMQ, with protocol 1
 * (as Smarter sends) and protocol 2, and reads every result with AsyncResult.get() from Redis and rpc://.
 */
import { AMQP_URL, REDIS_URL } from '../support/amqp.js';
import { type Harness, startWorker } from '../support/harness.js';
import { pythonJson } from '../support/python-script.js';

type Outcome = { ok?: unknown; raised?: string; module?: string; args?: string[]; state: string };

async function pythonClient(
  backend: string,
  protocol: 1 | 2,
  queue: string,
): Promise<Record<string, Outcome & number>> {
  const args = [AMQP_URL, backend, String(protocol), queue];
  return (await pythonJson('spec/interop/python/client.py', args)) as Record<string, Outcome & number>;
}

describe.each([
  ['redis', REDIS_URL, 1],
  ['redis', REDIS_URL, 2],
  ['rpc', 'rpc://', 1],
  ['rpc', 'rpc://', 2],
] as const)('own wiring: Python Celery → our worker, %s backend (%s), protocol %s', (_name, backend, protocol) => {
  let h: Harness;
  let out: Record<string, Outcome & number>;
  beforeAll(async () => {
    h = await startWorker({ env: { CELERY_RESULT_BACKEND: backend } });
    out = await pythonClient(backend, protocol, h.queue);
  }, 120_000);
  afterAll(async () => h.stop());

  test('positional and keyword arguments give the sum', () => {
    expect(out.positional).toEqual({ ok: 5, state: 'SUCCESS' });
    expect(out.keyword).toEqual({ ok: 42, state: 'SUCCESS' });
  });

  test('Decimal, datetime and UUID arguments arrive intact', () => {
    // kombu 5.2 sends these as strings (no __type__ markers); the worker echoes what it decoded.
    const echoed = out.types?.ok as { args: unknown[] };
    expect(echoed.args).toEqual(['1.10', '2026-01-02T03:04:05.678901Z', '12345678-1234-5678-1234-567812345678']);
  });

  test('a countdown delays the run by at least its length', () => {
    expect(out.countdown).toEqual({ ok: 2, state: 'SUCCESS' });
    expect(out.countdown_elapsed).toBeGreaterThanOrEqual(2);
  });

  test('expires in the past: REVOKED, and get() raises TaskRevokedError', () => {
    expect(out.expired).toMatchObject({ raised: 'TaskRevokedError', state: 'REVOKED' });
  });

  test('an unknown task name: get() raises NotRegistered', () => {
    expect(out.unknown).toMatchObject({ raised: 'NotRegistered', args: ['test.nope'], state: 'FAILURE' });
  });

  test('a failing task: get() raises ValueError with its message', () => {
    expect(out.failing).toMatchObject({ raised: 'ValueError', module: 'builtins', args: ['boom'], state: 'FAILURE' });
  });

  test('too many positional arguments: TypeError naming the problem', () => {
    expect(out.bad_args?.raised).toBe('TypeError');
    expect(out.bad_args?.args?.[0]).toContain('takes 2 positional argument(s) but 3 were given');
  });

  test('a chain built in Python runs its second step with the first result', () => {
    expect(out.chain).toEqual({ ok: 12, state: 'SUCCESS' });
  });

  test('a task that retries twice then succeeds keeps its id through the retries', () => {
    expect(out.retry).toEqual({ ok: 'done after 2 retries', state: 'SUCCESS' });
  });
});
