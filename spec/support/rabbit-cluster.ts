/**
 * A RabbitMQ cluster of the test's own on loopback: nodes of Debian's rabbitmq-server (spec/support/rabbit-node.ts)
 * started in parallel, then joined one at a time to the first (join_cluster resets the joining node, and two
 * joins at once can race on the first node's schema). `remove()` stops and deletes every node, also after a
 * failed start, so that an afterAll always leaves nothing behind.
 */
import { type RabbitNode, type RabbitNodeOptions, startRabbitNode } from './rabbit-node.js';

export interface RabbitCluster {
  readonly nodes: readonly RabbitNode[];
  /** Every node's URL, `;`-separated: the worker's failover list (CELERY_BROKER_URL). */
  readonly failoverUrl: string;
  /** The node whose broker connection list contains a connection with this client-provided name, if any. */
  nodeHolding(connectionName: string): Promise<RabbitNode | undefined>;
  remove(): Promise<void>;
}

interface ConnectionRow {
  port?: number;
  client_properties?: Array<[string, string, unknown]>;
}

export async function startRabbitCluster(
  size = 3,
  options: Omit<RabbitNodeOptions, 'name'> = {},
): Promise<RabbitCluster> {
  const started = await Promise.allSettled(Array.from({ length: size }, () => startRabbitNode(options)));
  const nodes = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const remove = async (): Promise<void> => {
    await Promise.all(nodes.map((n) => n.remove().catch(() => undefined)));
  };
  const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) {
    await remove();
    throw failed.reason;
  }
  const [first, ...rest] = nodes;
  if (!first) throw new Error('a cluster needs at least one node');
  try {
    for (const n of rest) await n.join(first);
    const members = await first.ctl('eval', 'length(rabbit_nodes:all_running()).');
    if (Number(members.trim()) !== size) {
      throw new Error(`cluster has ${members.trim()} running nodes, expected ${size}`);
    }
  } catch (err) {
    await remove();
    throw err;
  }
  return {
    nodes,
    failoverUrl: nodes.map((n) => n.url).join(';'),
    async nodeHolding(connectionName) {
      // list_connections is cluster-wide: ask any running node; the server port a connection came in on is
      // its node's (each node listens on its own).
      for (const n of nodes) {
        const out = await n
          .ctl('list_connections', 'port', 'client_properties', '-q', '--formatter', 'json')
          .catch(() => undefined);
        if (out === undefined) continue;
        const rows = JSON.parse(out || '[]') as ConnectionRow[];
        const row = rows.find((r) =>
          r.client_properties?.some(([k, , v]) => k === 'connection_name' && v === connectionName),
        );
        return row ? nodes.find((m) => m.port === row.port) : undefined;
      }
      return undefined;
    },
    remove,
  };
}
