/**
 * Celery's `--purge` and `celery purge`: the ready messages of queues removed (acked, as kombu's
 * `queue_purge` drops them), what is delivered and unacked elsewhere left alone. Counts per queue.
 */
import type { Broker } from '../broker/broker.js';
import type { Logger } from '../logger.js';

export async function purgeQueues(
  broker: Broker,
  queues: readonly string[],
  logger?: Logger,
): Promise<Array<{ queue: string; purged: number }>> {
  const out: Array<{ queue: string; purged: number }> = [];
  for (const queue of queues) {
    const ready = (await broker.inspectQueue(queue))?.messageCount ?? 0;
    let purged = 0;
    if (ready > 0) {
      await broker.take(queue, ready, async (d) => {
        broker.settle([d], 'ack');
        purged++;
      });
    }
    out.push({ queue, purged });
  }
  const total = out.reduce((n, q) => n + q.purged, 0);
  logger?.warn(`purge: discarded ${total} message(s) from ${queues.length} queue(s)`, {
    queues: Object.fromEntries(out.map((q) => [q.queue, q.purged])),
  });
  return out;
}
