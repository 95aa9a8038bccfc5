/** A redis-server of the test's own (free port, temporary directory, AOF on) that a test may stop and start. */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './rabbit-node.js';

export interface RedisNode {
  readonly port: number;
  readonly url: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  remove(): Promise<void>;
}

export async function startRedisNode(): Promise<RedisNode> {
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'redis-node-'));
  let server: ChildProcess | undefined;
  const start = async (): Promise<void> => {
    server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes', '--appendfsync', 'always', '--save', ''], { stdio: 'ignore' });
    const probe = new Redis({ port, lazyConnect: true, retryStrategy: () => 50, maxRetriesPerRequest: null });
    probe.on('error', () => undefined);
    await probe.connect().catch(() => undefined);
    await probe.ping();
    probe.disconnect();
  };
  const stop = async (): Promise<void> => {
    const s = server;
    server = undefined;
    if (!s || s.exitCode !== null) return;
    const exited = new Promise((r) => s.once('exit', r));
    s.kill('SIGTERM');
    await exited;
  };
  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}/0`,
    start,
    stop,
    async remove() {
      await stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
