/**
 * The table of remote-control commands, as Celery's `worker/control.py` keeps them apart from the transport
 * (`pidbox.ts`): each command's name, as `celery inspect` and `celery control` send it, and its reply.
 */
import os from 'node:os';
import { coerceError } from '../errors.js';
import { isRecord } from '../protocol/fields.js';
import type { Logger } from '../logger.js';
import type { TaskMessage } from '../protocol/types.js';
import type { WorkerControl } from '../worker/control.js';
import type { LamportClock } from './clock.js';
import type { EventDispatcher } from './events.js';
import type { Autoscaler } from './autoscale.js';
import { memdump, sampleMemory } from './memory.js';

/** The pool commands' levers: the autoscaler when `--autoscale` is on, the recycle when restarts are obeyed. */
export interface PoolControl {
  autoscaler?: Autoscaler;
  /** Celery's `pool_restart` (a recycle), when `worker_pool_restarts` is on; null otherwise. */
  restart: (() => void) | null;
}

export type ControlHandler = (args: Record<string, unknown>) => unknown;

/** What the commands read and act on. */
export interface CommandContext {
  worker: WorkerControl;
  clock: LamportClock;
  events: EventDispatcher;
  logger: Logger;
  nodeName: string;
  /** The configuration as `inspect conf` shows it (Celery's names, secrets censored), with or without the defaults. */
  conf: (withDefaults: boolean) => Record<string, unknown>;
  brokerUrl: string;
  onShutdown: () => void;
  /** Revoked ids sent by others (`hello`) are taken: false when the control policy refuses `revoke`, which they would bypass. */
  learnRevokes: boolean;
  /** Countdowns parked in the broker's delay store for the queues consumed here, where it can be read (Redis). */
  parked: () => Promise<Array<{ dueMs: number; msg: TaskMessage }>>;
  pool?: PoolControl;
}

/** The `revoked` of a `hello` request or reply (LimitedSet `_data`: id → seconds since the epoch) as entries in ms. */
export function revokedOfReply(reply: unknown): Array<[string, number]> {
  if (!isRecord(reply) || !isRecord(reply.revoked)) return [];
  const out: Array<[string, number]> = [];
  for (const [id, t] of Object.entries(reply.revoked)) {
    // Celery 5.x sends a number; a value of another shape is taken as "now", as LimitedSet.update does for a plain id.
    out.push([id, typeof t === 'number' && Number.isFinite(t) ? t * 1000 : Date.now()]);
  }
  return out;
}

/**
 * Revoked ids as `hello` carries them (LimitedSet `_data`): id → seconds since the epoch, always a float
 * in JSON, since Celery's `LimitedSet.update` refuses an integer timestamp (whole seconds are moved by 1 µs).
 */
export function revokedForHello(entries: Iterable<[string, number]>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [id, t] of entries) {
    const s = t / 1000;
    out[id] = Number.isInteger(s) ? s + 1e-6 : s;
  }
  return out;
}

const ok = (x: unknown) => ({ ok: x });
export const nok = (x: unknown) => ({ error: x });

/** A consumed queue as `inspect active_queues` shows it (kombu `Queue.as_dict(recurse=True)`, golden 13). */
export function activeQueueInfo(name: string) {
  return {
    name,
    exchange: {
      name,
      type: 'direct',
      arguments: null,
      durable: true,
      passive: false,
      auto_delete: false,
      delivery_mode: null,
      no_declare: false,
    },
    routing_key: name,
    queue_arguments: null,
    binding_arguments: null,
    consumer_arguments: null,
    durable: true,
    exclusive: false,
    auto_delete: false,
    no_ack: false,
    alias: null,
    bindings: [],
    no_declare: null,
    expires: null,
    message_ttl: null,
    max_length: null,
    max_length_bytes: null,
    max_priority: null,
  };
}

function requestInfo(
  nodeName: string,
  m: TaskMessage,
  extra: { started?: number; acknowledged?: boolean; queue?: string } = {},
) {
  return {
    id: m.id,
    name: m.task,
    args: m.args,
    kwargs: m.kwargs,
    type: m.task,
    hostname: nodeName,
    time_start: extra.started !== undefined ? extra.started / 1000 : null,
    acknowledged: extra.acknowledged ?? false,
    delivery_info: { exchange: '', routing_key: extra.queue ?? '', priority: m.priority, redelivered: false },
    worker_pid: process.pid,
  };
}

/** Celery's `dump_*` names, kept by Celery for older clients (`Panel.register(alias=...)`). */
const ALIASES: Record<string, string> = {
  dump_conf: 'conf',
  dump_schedule: 'scheduled',
  dump_reserved: 'reserved',
  dump_active: 'active',
  dump_revoked: 'revoked',
  dump_tasks: 'registered',
};

/** A count argument (`pool_grow 2`), which Celery's CLI sends as an int; 1 when absent. */
const count = (v: unknown, fallback = 1) => {
  const n = typeof v === 'number' ? v : typeof v === 'string' ? Number(v) : NaN;
  return Number.isInteger(n) ? n : fallback;
};
const optInt = (v: unknown) => {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v !== '' ? Number(v) : NaN;
  return Number.isInteger(n) ? n : null;
};

export function controlCommands(c: CommandContext): Record<string, ControlHandler> {
  const commands = ownCommands(c);
  for (const [alias, name] of Object.entries(ALIASES)) {
    const handler = commands[name];
    if (handler) commands[alias] = handler;
  }
  return commands;
}

/** Python's repr of a str → list-of-str mapping, as Celery's replies print `headers`. */
function pyDict(o: Record<string, unknown>): string {
  const r = (v: unknown): string =>
    Array.isArray(v) ? `[${v.map(r).join(', ')}]` : typeof v === 'string' ? `'${v}'` : JSON.stringify(v);
  return `{${Object.entries(o)
    .map(([k, v]) => `'${k}': ${r(v)}`)
    .join(', ')}}`;
}

function ownCommands(c: CommandContext): Record<string, ControlHandler> {
  const w = c.worker;
  const pool = c.pool ?? { restart: null };
  const info = (m: TaskMessage, extra?: { started?: number; acknowledged?: boolean; queue?: string }) =>
    requestInfo(c.nodeName, m, extra);
  const ids = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : typeof v === 'string' ? [v] : []);
  return {
    ping: () => ok('pong'),
    clock: () => ({ clock: c.clock.current }),
    // Celery's `hello` (mingle): take the caller's revoked ids, answer with ours and the clock; our own hello is answered null.
    hello: (a) => {
      if (a.from_node === c.nodeName) return null;
      const learned = c.learnRevokes ? w.learnRevoked(revokedOfReply(a)) : 0;
      c.logger.info(`sync with ${String(a.from_node)}`, { learnedRevoked: learned });
      return { revoked: revokedForHello(w.revoked.entries()), clock: c.clock.forward() };
    },
    heartbeat: () => {
      c.events.heartbeatNow();
      return null;
    },
    registered: (a) => w.registeredNames().filter((n) => a.builtins === true || !n.startsWith('celery.')),
    active: () =>
      w.activeRuns().map((r) => info(r.msg, { started: r.startedAt, acknowledged: r.acknowledged, queue: r.queue })),
    reserved: () => w.reservedMessages().map((m) => info(m)),
    // Celery's held ETA requests, then the countdowns parked in the broker for our queues (held by nobody yet).
    scheduled: async () => [
      ...w.heldMessages().map((m) => ({ eta: m.eta?.iso ?? null, priority: 6, request: info(m) })),
      ...(await c.parked()).map((p) => ({
        eta: p.msg.eta?.iso ?? new Date(p.dueMs).toISOString(),
        priority: 6,
        request: info(p.msg),
      })),
    ],
    revoked: () => w.revoked.ids(),
    // Celery's `query_task`: {id: [state, request info]} for the ids known here; a held ETA shows as 'scheduled'
    // (Celery keeps those outside its `requests` and leaves them out), an unknown id is left out.
    query_task: (a) => {
      const wanted = new Set(ids(a.ids));
      const out: Record<string, [string, ReturnType<typeof info>]> = {};
      for (const m of w.heldMessages()) if (wanted.has(m.id)) out[m.id] = ['scheduled', info(m)];
      for (const m of w.reservedMessages()) if (wanted.has(m.id)) out[m.id] = ['reserved', info(m)];
      for (const r of w.activeRuns()) {
        if (wanted.has(r.msg.id)) {
          out[r.msg.id] = [
            'active',
            info(r.msg, { started: r.startedAt, acknowledged: r.acknowledged, queue: r.queue }),
          ];
        }
      }
      return out;
    },
    active_queues: () => w.activeQueues().map((q) => activeQueueInfo(q)),
    stats: () => stats(c),
    conf: (a) =>
      c.conf(
        a.with_defaults === true ||
          (typeof a.with_defaults === 'string' && /^(1|true|yes|on|y|t)$/i.test(a.with_defaults)),
      ),
    report: () =>
      ok(`software -> ${'smarter-worker'} node ${process.version} ${os.type()} ${os.release()}\nnode: ${c.nodeName}\n`),
    revoke: (a) => {
      const list = ids(a.task_id);
      const running = w.revokeTasks(list, a.terminate === true);
      if (a.terminate === true) return ok(`terminate: ${running.length > 0 ? running.join(', ') : 'tasks unknown'}`);
      return ok(`tasks ${list.join(', ')} flagged as revoked`);
    },
    terminate: (a) => {
      const running = w.revokeTasks(ids(a.task_id), true);
      return ok(`terminate: ${running.length > 0 ? running.join(', ') : 'tasks unknown'}`);
    },
    enable_events: () => {
      if (c.events.taskEvents) return ok('task events already enabled');
      c.events.taskEvents = true;
      return ok('task events enabled');
    },
    disable_events: () => {
      if (!c.events.taskEvents) return ok('task events already disabled');
      c.events.taskEvents = false;
      return ok('task events disabled');
    },
    rate_limit: (a) => {
      const rate = typeof a.rate_limit === 'string' || typeof a.rate_limit === 'number' ? String(a.rate_limit) : null;
      try {
        return w.setRateLimit(String(a.task_name), rate) ? ok('new rate limit set successfully') : nok('unknown task');
      } catch (err) {
        return nok(coerceError(err).message);
      }
    },
    time_limit: (a) => {
      const num = (v: unknown) => (typeof v === 'number' ? v : null);
      return w.setTimeLimits(String(a.task_name), num(a.soft), num(a.hard))
        ? ok('time limits set successfully')
        : nok('unknown task');
    },
    add_consumer: async (a) => {
      if (typeof a.queue !== 'string' || a.queue === '') return nok('add_consumer needs a queue');
      await w.addConsumer(a.queue);
      return ok(`add consumer ${a.queue}`);
    },
    cancel_consumer: async (a) => {
      if (typeof a.queue !== 'string') return nok('cancel_consumer needs a queue');
      await w.cancelConsumer(a.queue);
      return ok(`no longer consuming from ${a.queue}`);
    },
    // Celery's pool commands: the pool is this process's async slots.
    pool_grow: (a) => {
      if (pool.autoscaler) return nok('pool_grow is not supported with autoscale. Adjust autoscale range instead.');
      w.resize(w.concurrency + Math.max(0, count(a.n)));
      c.logger.info(`pool_grow: ${w.concurrency} slots`);
      return ok('pool will grow');
    },
    pool_shrink: (a) => {
      if (pool.autoscaler) return nok('pool_shrink is not supported with autoscale. Adjust autoscale range instead.');
      // Never below one slot: a worker with none would hold its queue and run nothing.
      w.resize(Math.max(1, w.concurrency - Math.max(0, count(a.n))));
      c.logger.info(`pool_shrink: ${w.concurrency} slots`);
      return ok('pool will shrink');
    },
    autoscale: (a) => {
      if (!pool.autoscaler) return nok("ValueError('Autoscale not enabled')");
      const { max, min } = pool.autoscaler.update(optInt(a.max), optInt(a.min));
      return ok(`autoscale now max=${max} min=${min}`);
    },
    pool_restart: () => {
      if (!pool.restart) return nok("ValueError('Pool restarts not enabled')");
      pool.restart();
      return ok('reload started');
    },
    memsample: () => sampleMemory(),
    memdump: (a) => memdump(count(a.samples, 10)),
    objgraph: () => nok("ImportError('Requires the objgraph library')"),
    // Gossip's leader election: this worker takes no part in gossip (as with --without-gossip).
    election: () => null,
    // Celery's stamped revokes: later messages with a matching stamp are discarded, and with `terminate` running
    // tasks whose stamps match are aborted.
    revoke_by_stamped_headers: (a) => {
      const headers: Record<string, string[]> = {};
      if (Array.isArray(a.headers)) {
        for (const h of a.headers.map(String)) {
          const [k = '', v = ''] = h.split('=');
          headers[k] = [v];
        }
      } else if (isRecord(a.headers)) {
        for (const [k, v] of Object.entries(a.headers)) headers[k] = Array.isArray(v) ? v.map(String) : [String(v)];
      }
      w.revokeStamps(headers);
      const shown = Array.isArray(a.headers)
        ? pyDict(Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, v[0]])))
        : pyDict(headers);
      if (a.terminate !== true) return ok(`headers ${shown} flagged as revoked, but not terminated`);
      const hit: Record<string, string[]> = {};
      const ids: string[] = [];
      for (const r of w.activeRuns()) {
        for (const [k, want] of Object.entries(headers)) {
          const have = r.msg.stamps[k];
          const stamps = (Array.isArray(have) ? have : have === undefined ? [] : [have]).map(String);
          const match = stamps.filter((x) => want.includes(x));
          if (match.length === 0) continue;
          hit[k] = [...new Set([...(hit[k] ?? []), ...match])];
          ids.push(r.msg.id);
        }
      }
      if (ids.length === 0) return ok(`headers ${shown} were not terminated`);
      w.revokeTasks(ids, true);
      return ok(`headers ${pyDict(hit)} revoked`);
    },
    shutdown: () => {
      c.logger.warn('shutdown requested by remote control');
      setImmediate(() => c.onShutdown());
      return ok('shutting down');
    },
  };
}

function stats(c: CommandContext) {
  const w = c.worker;
  const usage = process.resourceUsage();
  const scheme = (/^([a-z]+):/i.exec(c.brokerUrl)?.[1] ?? 'amqp').toLowerCase();
  // kombu's transport names: Flower and `inspect stats` show them.
  const transport = scheme === 'rediss' ? 'redis' : scheme === 'amqps' ? 'amqp' : scheme;
  const url = new URL(c.brokerUrl.split(';')[0]?.replace(/^[a-z]+:/i, 'http:') ?? 'http://localhost');
  return {
    total: Object.fromEntries(w.counters().processed),
    pid: process.pid,
    clock: String(c.clock.current),
    uptime: Math.round((Date.now() - w.startedAt) / 1000),
    pool: {
      implementation: 'smarter-worker:async',
      'max-concurrency': w.concurrency,
      processes: [process.pid],
      'max-tasks-per-child': 'N/A',
      'put-guarded-by-semaphore': false,
      timeouts: [0, 0],
      writes: {},
    },
    broker: {
      hostname: url.hostname,
      userid: decodeURIComponent(url.username),
      virtual_host: decodeURIComponent(url.pathname.slice(1)) || (transport === 'amqp' ? '/' : '0'),
      port: Number(url.port || (transport === 'amqp' ? 5672 : transport === 'sentinel' ? 26379 : 6379)),
      insist: false,
      ssl: /^(amqps|rediss):/i.test(c.brokerUrl),
      transport,
      connect_timeout: 4,
      transport_options: {},
      login_method: 'PLAIN',
      uri_prefix: null,
      heartbeat: 120,
      failover_strategy: 'round-robin',
      alternates: [],
    },
    prefetch_count: w.prefetchCount,
    rusage: {
      utime: usage.userCPUTime / 1e6,
      stime: usage.systemCPUTime / 1e6,
      maxrss: usage.maxRSS,
      minflt: usage.minorPageFault,
      majflt: usage.majorPageFault,
      nvcsw: usage.voluntaryContextSwitches,
      nivcsw: usage.involuntaryContextSwitches,
    },
  };
}
