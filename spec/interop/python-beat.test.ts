/** Our worker keeps working with Python's Celery Beat: Debian's `celery beat` (protocol 1, as Smarter runs it) sends, we run. */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AMQP_URL } from '../support/amqp.js';
import { waitFor } from '../support/wait.js';
import { startWorker } from '../support/harness.js';
import { PYTHON } from '../support/python-worker.js';

test('own wiring: celery beat sends a short-interval entry to our queue; our worker runs it each time', async () => {
  const h = await startWorker();
  const dir = mkdtempSync(join(tmpdir(), 'pybeat-'));
  const beat = spawn(
    PYTHON,
    ['-m', 'celery', '-A', 'beatconf', 'beat', '-l', 'info', '-s', join(dir, 'celerybeat-schedule')],
    {
      cwd: 'spec/interop/python',
      env: { ...process.env, CELERY_BROKER_URL: AMQP_URL, BEAT_QUEUE: h.queue },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let log = '';
  beat.stderr?.on('data', (d: Buffer) => (log += d.toString()));
  try {
    await waitFor(() => ((h.worker.processed.get('test.add') ?? 0) >= 3 ? true : undefined), 30_000);
    expect(log).toContain('Sending due task short-entry (test.add)');
  } finally {
    beat.kill('SIGTERM');
    await new Promise((r) => beat.once('exit', r));
    await h.stop();
  }
}, 45_000);
