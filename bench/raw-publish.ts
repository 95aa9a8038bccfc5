/**
 * A publisher fast enough for a backlog of a million: one message published by real Python Celery, then cloned
 * with fresh task ids and published raw (amqplib with confirms, ioredis with LPUSH batches). Python itself
 * cannot: under RabbitMQ's flow control py-amqp's 1 s TCP_USER_TIMEOUT breaks its connection.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import type { Options } from 'amqplib';
import amqp from '../lib/broker/amqp/amqplib.js';
import type { Redis } from 'ioredis';
import { cloneAmqpProperties, cloner } from './clone.js';
import { PYTHON } from './support.js';

const exec = promisify(execFile);

/** One celery.accumulate (with a countdown in seconds, if given) sent by Python Celery to `queue` through `url`. */
async function pythonSendsOne(url: string, queue: string, countdown?: number): Promise<void> {
  await exec(PYTHON, ['bench/python/benchapp.py', queue, '1', ...(countdown ? [String(countdown)] : [])], {
    env: { ...process.env, CELERY_BROKER_URL: url },
  });
}

/**
 * Publishes `n` copies of a Python-sent celery.accumulate into `queue` (declared, durable) on RabbitMQ; with
 * `countdown`, each has the ETA Python gave the one it sent.
 */
export async function publishAmqp(url: string, queue: string, n: number, countdown?: number): Promise<void> {
  await pythonSendsOne(url, queue, countdown);
  const conn = await amqp.connect(url);
  try {
    const ch = await conn.createConfirmChannel();
    const got = await ch.get(queue, { noAck: true });
    if (got === false) throw new Error(`Python's message did not arrive in ${queue}`);
    const { content } = got;
    const props = Object.fromEntries(
      Object.entries(got.properties).filter(([, v]) => v !== undefined),
    ) as Options.Publish;
    for (let i = 0; i < n; i++) {
      const ok = ch.sendToQueue(queue, content, cloneAmqpProperties(props, randomUUID()));
      // The confirm window bounds what waits in memory; a full socket buffer waits for the broker.
      if (!ok || i % 5000 === 4999) await ch.waitForConfirms();
    }
    await ch.waitForConfirms();
  } finally {
    await conn.close().catch(() => undefined);
  }
}

/** Publishes `n` copies of a Python-sent celery.accumulate into `queue` on Redis (kombu's layout). */
export async function publishRedis(url: string, redis: Redis, queue: string, n: number): Promise<void> {
  await pythonSendsOne(url, queue);
  const text = await redis.rpop(queue);
  if (text === null) throw new Error(`Python's message did not arrive in ${queue}`);
  const env = JSON.parse(text) as { headers: { id: string }; properties: { delivery_tag: string } };
  const clone = cloner(text, [env.headers.id, env.properties.delivery_tag]);
  const BATCH = 1000;
  for (let i = 0; i < n; i += BATCH) {
    const batch = Array.from({ length: Math.min(BATCH, n - i) }, () => clone([randomUUID(), randomUUID()]));
    await redis.lpush(queue, ...batch);
  }
}
