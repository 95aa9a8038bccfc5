/**
 * Celery's `broker_connection_max_retries`: a worker whose broker cannot be reached gives up after the first
 * attempt and N retries, and exits with code 1 (RabbitMQ and Redis alike); 0 keeps retrying, as Celery's 0/None.
 * The broker URL names a port nobody listens on, so no broker of anyone's is touched.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { terminate } from '../support/child.js';

const children: ChildProcess[] = [];
afterAll(async () => {
  for (const c of children) await terminate(c);
});

function worker(url: string, maxRetries: string): { child: ChildProcess; exit: Promise<number>; out: () => string } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'tasks/main.ts', 'worker'], {
    env: {
      ...process.env,
      CELERY_BROKER_URL: url,
      CELERY_BROKER_CONNECTION_MAX_RETRIES: maxRetries,
      SMARTER_WORKER_HTTP_PORT: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let text = '';
  child.stdout?.on('data', (b: Buffer) => (text += b.toString()));
  child.stderr?.on('data', (b: Buffer) => (text += b.toString()));
  const exit = new Promise<number>((resolve) => child.on('exit', (code) => resolve(code ?? 128)));
  return { child, exit, out: () => text };
}

describe.each([
  ['RabbitMQ', 'amqp://127.0.0.1:1//'],
  ['Redis', 'redis://127.0.0.1:1/0'],
])('broker_connection_max_retries on %s', (_name, url) => {
  test('2: the third failed attempt in a row ends the worker with exit code 1', async () => {
    const w = worker(url, '2');
    expect(await w.exit).toBe(1);
    expect(w.out()).toContain(
      'giving up after 3 failed connection attempts in a row (broker_connection_max_retries 2)',
    );
  }, 60_000);

  test('0: retries without a limit (still running after several failed attempts)', async () => {
    const w = worker(url, '0');
    const exited = await Promise.race([w.exit, new Promise<'running'>((r) => setTimeout(() => r('running'), 6000))]);
    expect(exited).toBe('running');
    expect(w.out()).not.toContain('giving up');
    expect(w.out().split('broker connection failed').length - 1).toBeGreaterThanOrEqual(1);
    await terminate(w.child);
  }, 60_000);
});
