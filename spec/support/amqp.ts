/** Real-broker helpers for integration tests: unique names, a raw client, cleanup. */
import type { Channel, Options } from 'amqplib';
import amqp from '../../lib/broker/amqplib.js';
import { randomUUID } from 'node:crypto';

export const AMQP_URL = process.env.TEST_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672//';
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/0';

export function uniqueName(prefix = 'test'): string {
  return `${prefix}_${randomUUID().slice(0, 8)}`;
}

/** Deletes queues and exchanges a test created, ignoring the ones that are already gone. */
export async function deleteQueues(names: string[]): Promise<void> {
  const conn = await amqp.connect(AMQP_URL);
  try {
    for (const n of names) {
      const ch = await conn.createChannel();
      ch.on('error', () => undefined);
      await ch.deleteQueue(n).catch(() => undefined);
      await ch.deleteExchange(n).catch(() => undefined);
      await ch.close().catch(() => undefined);
    }
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

export async function waitFor<T>(fn: () => Promise<T | undefined> | T | undefined, timeoutMs = 15_000, stepMs = 50): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== null && v !== false) return v;
    if (Date.now() > until) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
}

/** Publishes raw bytes straight to a queue and waits for the broker's confirm. */
export async function publishRaw(queue: string, body: string | Buffer, options: Options.Publish): Promise<void> {
  await publishMany(queue, [{ body, options }]);
}

export async function publishMany(queue: string, messages: Array<{ body: string | Buffer; options: Options.Publish }>): Promise<void> {
  const conn = await amqp.connect(AMQP_URL);
  try {
    const ch = await conn.createConfirmChannel();
    for (const { body, options } of messages) ch.sendToQueue(queue, Buffer.isBuffer(body) ? body : Buffer.from(body), options);
    await ch.waitForConfirms();
  } finally {
    await conn.close().catch(() => undefined);
  }
}
