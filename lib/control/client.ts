/**
 * The sending side of Celery's remote control, as `celery inspect|control|status` and `app.control` use
 * it (celery/app/control.py, kombu's Mailbox): a request on the `celery.pidbox` fanout with a ticket and a
 * reply queue, and the replies `{node: reply}` collected until the timeout (or until every named destination
 * answered). Celery's table of commands, with the arguments its CLI takes for each (`Panel.meta`), is here
 * too, so `celery control pool_grow 2` sends what Python's CLI sends.
 */
import type { Broker } from '../broker/broker.js';
import { isRecord } from '../protocol/fields.js';

type ArgType = 'str' | 'int' | 'float' | 'bool';

export interface CommandMeta {
  type: 'inspect' | 'control';
  args?: ReadonlyArray<readonly [string, ArgType]>;
  variadic?: string;
  /** Shown with `--list` and in a usage error, as Celery's `signature`. */
  signature?: string;
}

/** Celery 5.6.3's `Panel.meta` (celery/worker/control.py): every command the CLI sends, and its arguments. */
export const CELERY_COMMANDS: Readonly<Record<string, CommandMeta>> = {
  report: { type: 'inspect' },
  conf: { type: 'inspect', args: [['with_defaults', 'bool']], signature: '[include_defaults=False]' },
  dump_conf: { type: 'inspect', args: [['with_defaults', 'bool']], signature: '[include_defaults=False]' },
  query_task: { type: 'inspect', variadic: 'ids', signature: '[id1 [id2 [... [idN]]]]' },
  revoke: { type: 'control', variadic: 'task_id', signature: '[id1 [id2 [... [idN]]]]' },
  revoke_by_stamped_headers: {
    type: 'control',
    variadic: 'headers',
    signature: '[key1=value1 [key2=value2 [... [keyN=valueN]]]]',
  },
  terminate: {
    type: 'control',
    args: [['signal', 'str']],
    variadic: 'task_id',
    signature: '<signal> [id1 [id2 [... [idN]]]]',
  },
  rate_limit: {
    type: 'control',
    args: [
      ['task_name', 'str'],
      ['rate_limit', 'str'],
    ],
    signature: '<task_name> <rate_limit (e.g., 5/s | 5/m | 5/h)>',
  },
  time_limit: {
    type: 'control',
    args: [
      ['task_name', 'str'],
      ['soft', 'float'],
      ['hard', 'float'],
    ],
    signature: '<task_name> <soft_secs> [hard_secs]',
  },
  clock: { type: 'inspect' },
  election: { type: 'control' },
  enable_events: { type: 'control' },
  disable_events: { type: 'control' },
  heartbeat: { type: 'control' },
  ping: { type: 'inspect' },
  stats: { type: 'inspect' },
  scheduled: { type: 'inspect' },
  dump_schedule: { type: 'inspect' },
  reserved: { type: 'inspect' },
  dump_reserved: { type: 'inspect' },
  active: { type: 'inspect' },
  dump_active: { type: 'inspect' },
  revoked: { type: 'inspect' },
  dump_revoked: { type: 'inspect' },
  registered: { type: 'inspect', variadic: 'taskinfoitems', signature: '[attr1 [attr2 [... [attrN]]]]' },
  dump_tasks: { type: 'inspect', variadic: 'taskinfoitems', signature: '[attr1 [attr2 [... [attrN]]]]' },
  objgraph: {
    type: 'inspect',
    args: [
      ['type', 'str'],
      ['num', 'int'],
      ['max_depth', 'int'],
    ],
    signature: '[object_type=Request] [num=200 [max_depth=10]]',
  },
  memsample: { type: 'inspect' },
  memdump: { type: 'inspect', args: [['samples', 'int']], signature: '[n_samples=10]' },
  pool_grow: { type: 'control', args: [['n', 'int']], signature: '[N=1]' },
  pool_shrink: { type: 'control', args: [['n', 'int']], signature: '[N=1]' },
  pool_restart: { type: 'control' },
  autoscale: {
    type: 'control',
    args: [
      ['max', 'int'],
      ['min', 'int'],
    ],
    signature: '[max [min]]',
  },
  shutdown: { type: 'control' },
  add_consumer: {
    type: 'control',
    args: [
      ['queue', 'str'],
      ['exchange', 'str'],
      ['exchange_type', 'str'],
      ['routing_key', 'str'],
    ],
    signature: '<queue> [exchange [type [routing_key]]]',
  },
  cancel_consumer: { type: 'control', args: [['queue', 'str']], signature: '<queue>' },
  active_queues: { type: 'inspect' },
};

export class CommandUsageError extends Error {}

function convert(name: string, type: ArgType, text: string): unknown {
  if (type === 'str') return text;
  if (type === 'bool') return /^(1|true|yes|on|y|t)$/i.test(text);
  const n = Number(text);
  if (!Number.isFinite(n) || (type === 'int' && !Number.isInteger(n))) {
    throw new CommandUsageError(
      `${name}: expected ${type === 'int' ? 'an integer' : 'a number'}, got ${JSON.stringify(text)}`,
    );
  }
  return n;
}

/** Celery's `_compile_arguments`: positional words to the command's named arguments. */
export function compileArguments(command: string, words: readonly string[]): Record<string, unknown> {
  const meta = CELERY_COMMANDS[command];
  if (!meta) throw new CommandUsageError(`Command ${JSON.stringify(command)} not recognized`);
  const out: Record<string, unknown> = {};
  const args = meta.args ?? [];
  let i = 0;
  for (; i < words.length && i < args.length; i++) {
    const [name, type] = args[i] ?? ['', 'str'];
    out[name] = convert(name, type, words[i] ?? '');
  }
  const rest = words.slice(i);
  if (meta.variadic) out[meta.variadic] = rest;
  else if (rest.length > 0) {
    throw new CommandUsageError(`Command '${command}' takes arguments: ${meta.signature ?? '(none)'}`);
  }
  return out;
}

/** A client's connection: the broker's own retries, bounded, as a CLI must end. */
export async function connectWithin(broker: Broker, limitMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      broker.connect(),
      new Promise((_r, reject) => {
        timer = setTimeout(() => reject(new Error(`cannot connect to the broker within ${limitMs / 1000} s`)), limitMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

export { type BroadcastOptions, broadcast } from './broadcast.js';

/** Celery's CLI output of one reply (`CLIContext.pretty`): its status and body. */
export function prettyReply(reply: unknown): { status: 'OK' | 'ERROR'; body: string } {
  const indent = (s: string) =>
    s
      .split('\n')
      .map((l) => `    ${l}`)
      .join('\n');
  if (Array.isArray(reply)) {
    return { status: 'OK', body: reply.length === 0 ? '- empty -' : reply.map((x) => `* ${pyText(x)}`).join('\n') };
  }
  if (isRecord(reply)) {
    if ('ok' in reply) return { status: 'OK', body: indent(prettyReply(reply.ok).body) };
    if ('error' in reply) return { status: 'ERROR', body: indent(prettyReply(reply.error).body) };
    return { status: 'OK', body: JSON.stringify(sortKeys(reply), null, 4) };
  }
  return { status: 'OK', body: pyText(reply) };
}

function pyText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === null || v === undefined) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  return JSON.stringify(v);
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (isRecord(v)) {
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, sortKeys(v[k])]),
    );
  }
  return v;
}
