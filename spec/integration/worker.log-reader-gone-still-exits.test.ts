/**
 * A worker whose log reader has gone (the pipe behind stdout closed: a log shipper restarting, a parent that gave
 * up on it) still shuts down on SIGTERM. Each write to the closed pipe fails with EPIPE; unheard, that error
 * reached the uncaught-exception handler, whose own log line failed the same way, and the process spun there
 * for ever, deaf to signals.
 */
import { spawn } from 'node:child_process';
import { freePort } from '../support/moto.js';

test('a worker whose stdout and stderr readers are gone still exits on SIGTERM', async () => {
  const closed = await freePort();
  const worker = spawn(process.execPath, ['--import', 'tsx', 'tasks/main.ts', '-Q', 'log_reader_gone'], {
    env: { ...process.env, CELERY_BROKER_URL: `amqp://u:p@127.0.0.1:${closed}//` },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => worker.once('exit', (code) => resolve(code)));
  // Started: it logs its retries against a broker that is not there.
  await new Promise<void>((resolve) => {
    let seen = '';
    worker.stdout.on('data', (d: Buffer) => {
      seen += d.toString();
      if (seen.includes('broker connection failed')) resolve();
    });
  });
  worker.stdout.destroy();
  worker.stderr.destroy();
  worker.kill('SIGTERM');
  const timeout = new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), 20_000).unref());
  const outcome = await Promise.race([exited, timeout]);
  if (outcome === 'still running') worker.kill('SIGKILL');
  expect(outcome).toBe(0);
}, 60_000);
