/**
 * `celery inspect|control|status|purge` as Python's Celery CLI runs them (celery/bin/control.py, purge.py):
 * the same options, arguments, output and exit codes (69, EX_UNAVAILABLE, when no node replied), spoken to
 * any worker on the broker, Python's or ours.
 */
import { createInterface } from 'node:readline/promises';
import { createBroker, redisOptionsOf } from '../../lib/broker/create-broker.js';
import type { Broker } from '../../lib/broker/broker.js';
import { loadCommandLine } from '../../lib/config/settings.js';
import { WORKER_SETTINGS } from '../../lib/app/worker-settings.js';
import {
  CELERY_COMMANDS,
  CommandUsageError,
  broadcast,
  compileArguments,
  connectWithin,
  prettyReply,
} from '../../lib/control/client.js';
import { purgeQueues } from '../../lib/control/purge.js';
import { createLogger } from '../../lib/logger.js';
import { SMARTER_SETTINGS } from '../settings.js';

/** Celery's EX_UNAVAILABLE: no node replied. */
export const EX_UNAVAILABLE = 69;

const REMOTE_SETTINGS = {
  brokerUrl: WORKER_SETTINGS.brokerUrl,
  brokerUseSsl: WORKER_SETTINGS.brokerUseSsl,
  brokerConnectionTimeout: WORKER_SETTINGS.brokerConnectionTimeout,
  brokerTransportOptions: WORKER_SETTINGS.brokerTransportOptions,
  operationalQueue: SMARTER_SETTINGS.operationalQueue,
  infrastructureQueue: SMARTER_SETTINGS.infrastructureQueue,
};

type Out = (s: string) => void;

class UsageError extends Error {}

async function withBroker<T>(use: (broker: Broker) => Promise<T>): Promise<T> {
  const loaded = loadCommandLine('celery', REMOTE_SETTINGS, process.env, []);
  if (!loaded) throw new UsageError('invalid broker configuration');
  const c = loaded.values;
  const broker = createBroker({
    url: c.brokerUrl,
    // The client's own connection: its retries are not worth a log line each.
    logger: createLogger({ level: 'error' }),
    redis: redisOptionsOf(c.brokerTransportOptions),
    tls: c.brokerUseSsl,
    connectTimeoutMs: c.brokerConnectionTimeout * 1000,
  });
  try {
    await connectWithin(broker, Math.max(10_000, c.brokerConnectionTimeout * 3000));
    return await use(broker);
  } finally {
    await broker.close().catch(() => undefined);
  }
}

interface RemoteOptions {
  timeoutMs: number;
  destination: string[] | undefined;
  json: boolean;
  list: boolean;
  words: string[];
}

function remoteOptions(argv: readonly string[]): RemoteOptions {
  const o: RemoteOptions = { timeoutMs: 1000, destination: undefined, json: false, list: false, words: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const m = /^(--?[A-Za-z-]+)(?:=(.*))?$/s.exec(arg);
    const name = m?.[1];
    const value = () => {
      const v = m?.[2] ?? argv[++i];
      if (v === undefined) throw new UsageError(`Option '${name ?? arg}' requires an argument.`);
      return v;
    };
    if (name === '-t' || name === '--timeout') {
      const t = Number(value());
      if (!Number.isFinite(t) || t < 0) throw new UsageError("Invalid value for '-t' / '--timeout'");
      o.timeoutMs = t * 1000;
    } else if (name === '-d' || name === '--destination') {
      o.destination = value()
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
    } else if (name === '-j' || name === '--json') o.json = true;
    else if (name === '--list') o.list = true;
    else o.words.push(arg);
  }
  return o;
}

const pluralize = (n: number, word: string) => (n === 1 ? word : `${word}s`);

/** `celery inspect|control <command> [args]` and `celery status`. */
export async function remoteCommand(
  kind: 'inspect' | 'control' | 'status',
  argv: readonly string[],
  o: { quiet: boolean },
  out: Out = (s) => void process.stdout.write(`${s}\n`),
): Promise<number> {
  const opts = remoteOptions(argv);
  const type = kind === 'status' ? 'inspect' : kind;
  if (opts.list) {
    for (const [name, meta] of Object.entries(CELERY_COMMANDS)) {
      if (meta.type === type) out(`|${name}${meta.signature ? ` ${meta.signature}` : ''}`);
    }
    return 0;
  }
  const [command = kind === 'status' ? 'ping' : '', ...words] = kind === 'status' ? ['ping'] : opts.words;
  if (command === '') throw new UsageError("Missing argument 'COMMAND'.");
  if (CELERY_COMMANDS[command]?.type !== type) {
    const choices = Object.entries(CELERY_COMMANDS)
      .filter(([, m]) => m.type === type)
      .map(([n]) => n);
    throw new UsageError(`Command ${command} not recognized. Available ${type} commands: ${choices.join(', ')}`);
  }
  const args = compileArguments(command, words);
  const showBody = kind !== 'status';
  const replies = await withBroker((broker) =>
    broadcast(broker, command, args, {
      timeoutMs: opts.timeoutMs,
      ...(opts.destination ? { destination: opts.destination } : {}),
      onReply: opts.json
        ? undefined
        : (node, reply) => {
            const { status, body } = prettyReply(reply);
            out(`->  ${node}: ${status}`);
            if (showBody && body) {
              out(
                body
                  .split('\n')
                  .map((l) => `    ${l}`)
                  .join('\n'),
              );
            }
          },
    }),
  );
  if (replies.length === 0) {
    process.stderr.write('Error: No nodes replied within time constraint\n');
    return EX_UNAVAILABLE;
  }
  if (opts.json) {
    // inspect answers one mapping of every node; control the list of replies (Celery's `broadcast`).
    out(JSON.stringify(kind === 'control' ? replies : Object.assign({}, ...replies)));
    if (kind !== 'status') return 0;
  }
  if (kind !== 'control' && !o.quiet) out(`\n${replies.length} ${pluralize(replies.length, 'node')} online.`);
  return 0;
}

/** `celery purge [-f] [-Q q1,q2] [-X q3]`: the default queues are Smarter's two. */
export async function purgeCommand(
  argv: readonly string[],
  out: Out = (s) => void process.stdout.write(`${s}\n`),
): Promise<number> {
  let force = false;
  const queues: string[] = [];
  const exclude: string[] = [];
  const list = (v: string | undefined) =>
    (v ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const m = /^(--?[A-Za-z-]+)(?:=(.*))?$/s.exec(arg);
    const name = m?.[1];
    if (name === '-f' || name === '--force') force = true;
    else if (name === '-Q' || name === '--queues') queues.push(...list(m?.[2] ?? argv[++i]));
    else if (name === '-X' || name === '--exclude-queues') exclude.push(...list(m?.[2] ?? argv[++i]));
    else throw new UsageError(`No such option: ${arg}`);
  }
  const loaded = loadCommandLine('celery', REMOTE_SETTINGS, process.env, []);
  if (!loaded) return 2;
  const all = queues.length > 0 ? queues : [loaded.values.operationalQueue, loaded.values.infrastructureQueue];
  const names = [...new Set(all)].filter((q) => !exclude.includes(q)).sort();
  if (names.length === 0) return 0;
  const headline = pluralize(names.length, 'queue');
  if (!force) {
    if (!process.stdin.isTTY) {
      process.stderr.write('Aborted!\n');
      return 1;
    }
    const rl = createInterface({ input: process.stdin, output: process.stdout });
    const answer = await rl.question(
      `WARNING:This will remove all tasks from ${headline}: ${names.join(', ')}.\n         There is no undo for this operation!\n\n(to skip this prompt use the -f option)\nAre you sure you want to delete all tasks? [y/N]: `,
    );
    rl.close();
    if (!/^y(es)?$/i.test(answer.trim())) {
      process.stderr.write('Aborted!\n');
      return 1;
    }
  }
  const counts = await withBroker(async (broker) => {
    const existing: string[] = [];
    for (const q of names) if ((await broker.inspectQueue(q)) !== null) existing.push(q);
    return purgeQueues(broker, existing);
  });
  const messages = counts.reduce((n, q) => n + q.purged, 0);
  out(
    messages > 0
      ? `Purged ${messages} ${pluralize(messages, 'message')} from ${names.length} known task ${headline}.`
      : `No messages purged from ${names.length} ${headline}.`,
  );
  return 0;
}

export { CommandUsageError, UsageError };
