/** Real-broker helpers for integration tests: unique names, a raw client, cleanup. */
import type { Channel, Options } from 'amqplib';
import amqp from '../../lib/broker/amqp/amqplib.js';
import { randomUUID } from 'node:crypto';
import { retireQueues } from '../../bench/retire-queue.js';

export const AMQP_URL = process.env.TEST_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672//';
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/0';

export function uniqueName(prefix = 'test'): string {
  return `${prefix}_${randomUUID().slice(0, 8)}`;
}

/** Deletes queues and exchanges a test created, ignoring the ones that are already gone. */
export async function deleteQueues(names: string[]): Promise<void> {
  const conn = await amqp.connect(AMQP_URL);
  try {
    await retireQueues(conn, names);
  } finally {
    await conn.close();
  }
}

export async function withChannel<T>(fn: (ch: Channel) => Promise<T>): Promise<T> {
  const conn = await amqp.connect(AMQP_URL);
  try {
    const ch = await conn.createChannel();
    // A passive declare of a missing queue closes the channel with 404; the caller sees the rejection.
    ch.on('error', () => undefined);
    return await fn(ch);
  } finally {
    await conn.close().catch(() => undefined);
  }
}

/** A task message as Python's Celery publishes it (protocol 2, JSON, keyword arguments only), for `publishMany`. */
export function celeryMessage(
  task: string,
  kwargs: Record<string, unknown>,
  id: string = randomUUID(),
): { id: string; body: string; options: Options.Publish } {
  return {
    id,
    body: JSON.stringify([[], kwargs, {}]),
    options: {
      contentType: 'application/json',
      contentEncoding: 'utf-8',
      correlationId: id,
      headers: { lang: 'py', task, id, root_id: id, retries: 0 },
    },
  };
}

/** Publishes raw bytes straight to a queue and waits for the broker's confirm. */
export async function publishRaw(queue: string, body: string | Buffer, options: Options.Publish): Promise<void> {
  await publishMany(queue, [{ body, options }]);
}

/** Publishes `messages` to `queue` on one confirm channel, and waits for the broker (of `url`) to confirm them. */
export async function publishMany(
  queue: string,
  messages: Array<{ body: string | Buffer; options: Options.Publish }>,
  url = AMQP_URL,
): Promise<void> {
  const conn = await amqp.connect(url);
  try {
    const ch = await conn.createConfirmChannel();
    for (const { body, options } of messages) {
      ch.sendToQueue(queue, Buffer.isBuffer(body) ? body : Buffer.from(body), options);
    }
    await ch.waitForConfirms();
  } finally {
    await conn.close().catch(() => undefined);
  }
}

/**
 * Closes the one connection whose client-provided name is `connectionName` (our broker names it after the
 * node), never anyone else's: the broker is shared. Resolves once RabbitMQ has closed it.
 */
export async function closeConnectionNamed(connectionName: string, reason = 'test'): Promise<void> {
  const { execFile } = await import('node:child_process');
  const { promisify } = await import('node:util');
  const exec = promisify(execFile);
  const { stdout } = await exec('rabbitmqctl', [
    'list_connections',
    'name',
    'client_properties',
    '-q',
    '--formatter',
    'json',
  ]);
  const conns = JSON.parse(stdout) as Array<{ name: string; client_properties: Array<[string, string, unknown]> }>;
  const mine = conns.filter((c) =>
    c.client_properties.some(([k, , v]) => k === 'connection_name' && v === connectionName),
  );
  if (mine.length === 0) throw new Error(`no connection named ${connectionName}`);
  // close_connection takes the Erlang pid, which only the tabular listing prints usably.
  const table = (await exec('rabbitmqctl', ['list_connections', 'pid', 'name', '-q'])).stdout
    .split('\n')
    .map((l) => l.split('\t'));
  for (const c of mine) {
    const pid = table.find((row) => row[1] === c.name)?.[0];
    if (pid) await exec('rabbitmqctl', ['close_connection', pid, reason]);
  }
}
