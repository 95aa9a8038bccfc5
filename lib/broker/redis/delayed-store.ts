/**
 * The operator's view of our delayed set (`smarter.delayed`, score = due ms, member = kombu's unacked entry
 * `[message, exchange, routing_key]`): which queue each parked message is for, listed for `inspect
 * scheduled`, purged, or released, i.e. moved back to its queue unchanged now, so that whatever consumes the
 * queue (a Python worker too) holds it until its ETA as kombu does. Each move is one script, so a message
 * released while a worker's scheduler moves due ones moves once.
 */
import type { DelayedToolOptions, ParkedMessage } from '../broker.js';
import { decodeEnvelope } from './envelope.js';
import { COMMON } from './scripts.js';
import { LuaScript } from './script.js';
import type { KombuRedis } from './transport.js';

/** How many entries one script looks at: a long delayed set never blocks Redis for long. */
const BATCH = 500;

/**
 * Looks at the entries [offset, offset + batch) of the delayed set and, for those routed to the queue (or all
 * when ''), purges or releases them. KEYS: delayed, unroutable. ARGV: prefix, queue, 'purge'|'release',
 * offset, batch. Returns {acted, looked}.
 */
const SELECT = new LuaScript(
  `${COMMON}
local entries = redis.call('ZRANGE', KEYS[1], tonumber(ARGV[4]), tonumber(ARGV[4]) + tonumber(ARGV[5]) - 1)
local acted = 0
for _, entry in ipairs(entries) do
  local take = ARGV[2] == ''
  if not take then
    local v = meta(entry)
    if v then
      for _, q in ipairs(lookup(ARGV[1], tostring(v[2] or ''), tostring(v[3] or ''))) do
        if q == ARGV[2] then take = true end
      end
    end
  end
  if take and redis.call('ZREM', KEYS[1], entry) == 1 then
    if ARGV[3] == 'release' then restore_entry(ARGV[1], entry, true, false, KEYS[2]) end
    acted = acted + 1
  end
end
return { acted, #entries }`,
  2,
);

async function select(
  k: KombuRedis,
  action: 'purge' | 'release',
  queue: string | undefined,
  options: DelayedToolOptions = {},
): Promise<number> {
  let offset = 0;
  let total = 0;
  let seen = 0;
  const size = options.onProgress ? await k.redis.zcard(k.keys.delayed) : 0;
  // Each batch is one script: stopped between two, every entry is acted on once or still parked.
  while (!options.signal?.aborted) {
    const res = (await SELECT.run(
      k.redis,
      [k.keys.delayed, k.keys.unroutable],
      [k.keys.prefix, queue ?? '', action, offset, BATCH],
    )) as [number, number];
    const [acted, looked] = res;
    total += acted;
    seen += looked;
    options.onProgress?.({ seen, acted: total, total: size });
    // What was removed shifted the rest down: the next batch starts after what was kept.
    offset += looked - acted;
    if (looked < BATCH) return total;
  }
  return total;
}

/** Removes the parked messages of a queue (every queue when none); returns how many. */
export function purgeDelayed(k: KombuRedis, queue?: string, options?: DelayedToolOptions): Promise<number> {
  return select(k, 'purge', queue, options);
}

/** Moves the parked messages of a queue (every queue when none) back to it unchanged; returns how many. */
export function releaseDelayed(k: KombuRedis, queue?: string, options?: DelayedToolOptions): Promise<number> {
  return select(k, 'release', queue, options);
}

/** The first `limit` parked messages (soonest due first) for any of `queues`, decoded; unreadable ones are left out. */
export async function listDelayed(k: KombuRedis, queues: readonly string[], limit: number): Promise<ParkedMessage[]> {
  const wanted = new Set(queues);
  const bindings = new Map<string, Array<{ rk: string; queue: string }>>();
  const routeOf = async (exchange: string, rk: string): Promise<string[]> => {
    if (exchange === '') return [rk];
    let b = bindings.get(exchange);
    if (!b) {
      b = (await k.redis.smembers(k.keys.binding(exchange))).flatMap((m) => {
        const [key, , queue] = m.split('\x06\x16');
        return key !== undefined && queue !== undefined ? [{ rk: key, queue }] : [];
      });
      bindings.set(exchange, b);
    }
    return b.filter((x) => x.rk === rk).map((x) => x.queue);
  };
  const out: ParkedMessage[] = [];
  for (let offset = 0; out.length < limit; offset += BATCH) {
    const page = await k.redis.zrange(k.keys.delayed, offset, offset + BATCH - 1, 'WITHSCORES');
    for (let i = 0; i + 1 < page.length && out.length < limit; i += 2) {
      try {
        const entry = JSON.parse(page[i] ?? '') as unknown;
        if (!Array.isArray(entry)) continue;
        const [message, exchange, rk] = entry as [unknown, unknown, unknown];
        const text = (v: unknown) => (typeof v === 'string' ? v : '');
        const queue = (await routeOf(text(exchange), text(rk))).find((q) => wanted.has(q));
        if (queue === undefined) continue;
        out.push({ queue, dueMs: Number(page[i + 1]), raw: decodeEnvelope(JSON.stringify(message)).raw });
      } catch {
        // Unreadable: the scheduler moves it to `smarter.unroutable` or its queue's dead-letter path when due.
      }
    }
    if (page.length < 2 * BATCH) break;
  }
  return out;
}
