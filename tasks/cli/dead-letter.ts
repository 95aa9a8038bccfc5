/**
 * `smarter-worker dead-letter list <queue>` and `smarter-worker dead-letter replay <queue> [--task NAME]
 * [--reason TEXT] [--limit N] [--to QUEUE]`. `<queue>` is the dead-letter queue or the task queue it
 * belongs to (the dead-letter suffix is added when missing).
 */
import { type DeadLetterSummary, listDeadLetters, replayDeadLetters } from '../../lib/deadletter/tools.js';
import { redisOptionsOf } from '../../lib/broker/create-broker.js';
import { withBroker } from '../../lib/broker/one-shot.js';
import type { TlsSettings } from '../../lib/config/tls.js';
import type { RedisTransportOptions } from '../../lib/app/setting-values.js';
import { type Command, UsageError } from './options.js';

export const DEAD_LETTER_FLAGS = { strings: ['task', 'reason', 'limit', 'to'], booleans: [] } as const;

export interface DeadLetterConfig {
  brokerUrl: string;
  /** CELERY_BROKER_USE_SSL, for an amqps:// broker with a CA of its own. */
  brokerUseSsl?: TlsSettings;
  deadLetterSuffix: string;
  brokerTransportOptions: RedisTransportOptions;
}

const iso = (ms: number | null) => (ms === null ? 'unknown' : new Date(ms).toISOString());

export function formatSummary(s: DeadLetterSummary): string {
  const rows = (m: Map<string, number>) =>
    [...m].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([k, n]) => `  ${String(n).padStart(7)}  ${k}`);
  return [
    `${s.queue}: ${s.total} message(s); oldest ${iso(s.oldest)}, newest ${iso(s.newest)}`,
    'by reason:',
    ...rows(s.byReason),
    'by task:',
    ...rows(s.byTask),
  ].join('\n');
}

export const deadLetterCommand: Command<DeadLetterConfig> = async (positionals, own, config, out) => {
  const [action, name, ...extra] = positionals;
  if ((action !== 'list' && action !== 'replay') || !name || extra.length > 0) {
    throw new UsageError(
      'usage: smarter-worker dead-letter list <queue> | replay <queue> [--task NAME] [--reason TEXT] [--limit N] [--to QUEUE]',
    );
  }
  const queue = name.endsWith(config.deadLetterSuffix) ? name : name + config.deadLetterSuffix;
  if (action === 'list') {
    if (Object.keys(own).length > 0) throw new UsageError('dead-letter list takes no flags');
    out(
      formatSummary(
        await withBroker(
          config.brokerUrl,
          (b) => listDeadLetters(b, queue),
          undefined,
          redisOptionsOf(config.brokerTransportOptions),
          config.brokerUseSsl,
        ),
      ),
    );
    return 0;
  }
  const str = (k: string) => (typeof own[k] === 'string' ? own[k] : undefined);
  const limitText = str('limit');
  const limit = limitText === undefined ? undefined : Number(limitText);
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 1)) {
    throw new UsageError(`--limit expects a positive integer, got ${JSON.stringify(limitText)}`);
  }
  const task = str('task');
  const reason = str('reason');
  const to = str('to');
  const r = await withBroker(
    config.brokerUrl,
    (b) =>
      replayDeadLetters(b, queue, {
        ...(task !== undefined ? { task } : {}),
        ...(reason !== undefined ? { reason } : {}),
        ...(limit !== undefined ? { limit } : {}),
        ...(to !== undefined ? { to } : {}),
      }),
    undefined,
    redisOptionsOf(config.brokerTransportOptions),
    config.brokerUseSsl,
  );
  const targets = [...r.replayedTo].map(([q, n]) => `${n} to ${q}`).join(', ');
  out(
    `replayed ${r.replayed} message(s) from ${queue}${targets ? ` (${targets})` : ''}; ${r.skipped} not chosen left in place`,
  );
  for (const s of r.stayed) out(`left in place: ${s.count} message(s): ${s.reason}`);
  return 0;
};
