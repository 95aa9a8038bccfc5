/** The machine a report was measured on: CPU, cores, memory and the versions of what was compared. */
import amqp from 'amqplib';
import { execFile } from 'node:child_process';
import os from 'node:os';
import { promisify } from 'node:util';
import { AMQP_URL, PYTHON } from './support.js';

const exec = promisify(execFile);
const attempt = async (fn: () => Promise<string>) => fn().catch(() => 'unknown');

export async function describeMachine(): Promise<Record<string, string>> {
  const rabbit = await attempt(async () => {
    const conn = await amqp.connect(AMQP_URL);
    const v = (conn.connection as unknown as { serverProperties?: { version?: unknown } }).serverProperties?.version;
    const version = typeof v === 'string' ? v : Buffer.isBuffer(v) ? v.toString() : 'unknown';
    await conn.close();
    return version;
  });
  const redis = await attempt(
    async () => /redis_version:(\S+)/.exec((await exec('redis-cli', ['INFO', 'server'])).stdout)?.[1] ?? 'unknown',
  );
  const celery = await attempt(async () =>
    (
      await exec(PYTHON, ['-c', 'import celery, sys; print(celery.__version__, "on Python", sys.version.split()[0])'])
    ).stdout.trim(),
  );
  return {
    CPU: os.cpus()[0]?.model ?? 'unknown',
    cores: String(os.availableParallelism()),
    memory: `${(os.totalmem() / 2 ** 30).toFixed(1)} GiB`,
    OS: `${os.type()} ${os.release()} ${os.arch()}`,
    RabbitMQ: rabbit,
    Redis: redis,
    Node: process.version,
    'Python Celery': celery,
  };
}
