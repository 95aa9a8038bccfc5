/**
 * Celery's start-up sync (`celery/worker/consumer/mingle.py`): before consuming, broadcast `hello` with our
 * node name, clock and revoked ids to every worker (Python's or ours), collect their replies for a second,
 * and take their revoked ids and clock. A countdown revoked before this worker started is then discarded
 * here too, where it would otherwise run after a rolling restart.
 */
import type { Broker } from '../broker/broker.js';
import type { Logger } from '../logger.js';
import { isRecord } from '../protocol/fields.js';
import type { LamportClock } from './clock.js';
import { broadcast } from './broadcast.js';
import { revokedForHello, revokedOfReply } from './commands.js';

/** Celery's `inspect(timeout=1.0)` in `Mingle.send_hello`. */
export const MINGLE_TIMEOUT_MS = 1000;

/** What mingle reads and feeds of the worker. */
export interface MingleTarget {
  /** Ids with when they were revoked (epoch ms). */
  revokedEntries(): Iterable<[string, number]>;
  learnRevoked(entries: Iterable<readonly [string, number]>): number;
}

export interface MingleResult {
  /** Nodes that answered (ourselves excluded). */
  nodes: string[];
  /** Revoked ids that were new here. */
  learned: number;
}

export async function mingle(
  broker: Broker,
  clock: LamportClock,
  nodeName: string,
  target: MingleTarget,
  logger: Logger,
  timeoutMs = MINGLE_TIMEOUT_MS,
): Promise<MingleResult> {
  logger.info('mingle: searching for neighbors');
  const bodies = await broadcast(
    broker,
    'hello',
    { from_node: nodeName, revoked: revokedForHello(target.revokedEntries()) },
    {
      timeoutMs,
      clock: clock.forward(),
      onMalformed: (err) => logger.warn(`mingle: dropped a malformed reply: ${err.message}`),
    },
  );
  const replies = new Map<string, unknown>();
  for (const body of bodies) {
    for (const [node, reply] of Object.entries(body)) if (node !== nodeName) replies.set(node, reply);
  }
  let learned = 0;
  const nodes: string[] = [];
  for (const [node, reply] of replies) {
    // A worker answering its own hello answers null (Celery's `hello`): nothing to sync with.
    if (!isRecord(reply)) continue;
    nodes.push(node);
    if (typeof reply.clock === 'number') clock.adjust(reply.clock);
    else clock.forward();
    learned += target.learnRevoked(revokedOfReply(reply));
  }
  if (nodes.length === 0) logger.info('mingle: all alone');
  else logger.info(`mingle: sync with ${nodes.length} nodes complete`, { nodes, learnedRevoked: learned });
  return { nodes, learned };
}
