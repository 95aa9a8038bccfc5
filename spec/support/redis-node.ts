/** A redis-server of the test's own (free port, temporary directory, AOF on) that a test may stop and start. */
import { spawn } from 'node:child_process';
import { Redis, type RedisOptions } from 'ioredis';
import { type ServerNode, startServerNode } from './server-node.js';

export interface RedisNode extends ServerNode {
  readonly url: string;
}

/** A node of the test file's own and an admin client on it: started before its tests (handed to `use`), removed after. */
export function redisNodeForFile(use: (r: { node: RedisNode; admin: Redis }) => void): void {
  let node: RedisNode | undefined;
  let admin: Redis | undefined;
  beforeAll(async () => {
    node = await startRedisNode();
    admin = new Redis(node.url);
    use({ node, admin });
  }, 60_000);
  afterAll(async () => {
    admin?.disconnect();
    await node?.remove();
  });
}

export interface RedisNodeOptions {
  /** How it listens, in place of `--port <port>`: a TLS port, a password. */
  listen?: (port: number) => string[];
  /** What the readiness probe needs to be let in on such a listener (`tls`, `password`). */
  probe?: RedisOptions;
}

export async function startRedisNode(o: RedisNodeOptions = {}): Promise<RedisNode> {
  const node = await startServerNode({
    name: 'redis-node',
    launch: (dir, port) =>
      spawn(
        'redis-server',
        [
          ...(o.listen?.(port) ?? ['--port', String(port)]),
          '--bind',
          '127.0.0.1',
          '--dir',
          dir,
          '--appendonly',
          'yes',
          '--appendfsync',
          'always',
          '--save',
          '',
        ],
        { stdio: 'ignore' },
      ),
    async ready(_server, port) {
      const probe = new Redis({
        port,
        ...o.probe,
        lazyConnect: true,
        retryStrategy: () => 50,
        maxRetriesPerRequest: null,
      });
      probe.on('error', () => undefined);
      await probe.connect().catch(() => undefined);
      await probe.ping();
      probe.disconnect();
    },
  });
  return Object.assign(node, { url: `redis://127.0.0.1:${node.port}/0` });
}
