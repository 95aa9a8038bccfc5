/**
 * A redis-server of its own for a benchmark: a free port, no persistence, its data in memory only, so a
 * backlog of a million never touches the shared Redis on 6379.
 */
import { spawn } from 'node:child_process';
import { Redis } from 'ioredis';
import { freePort } from './rabbit-node.js';

export interface RedisServer {
  readonly url: string;
  readonly pid: number | undefined;
  /** Ends the server (SIGTERM) and waits for it. */
  stop(): Promise<void>;
}

export async function startRedisServer(): Promise<RedisServer> {
  const port = await freePort();
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--loglevel', 'warning'],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const url = `redis://127.0.0.1:${port}/0`;
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  probe.on('error', () => undefined);
  for (const until = Date.now() + 20_000; ;) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}`);
    try {
      await probe.connect();
      await probe.ping();
      break;
    } catch (e) {
      probe.disconnect();
      if (Date.now() > until) throw new Error(`redis-server on ${port} did not answer: ${String(e)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  probe.disconnect();
  return {
    url,
    pid: child.pid,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
