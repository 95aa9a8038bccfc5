/**
 * The body-size limit sits in the one decoder, so it holds on every broker: on RabbitMQ and on Redis a body
 * over SMARTER_WORKER_MAX_BODY_SIZE, or a small zlib body that inflates past it, lands in the dead-letter
 * queue with a reason giving the size and the limit, and the worker goes on with the next task.
 */
import zlib from 'node:zlib';
import { randomUUID } from 'node:crypto';
import type { Broker } from '../../lib/broker/broker.js';
import { REDIS_URL } from '../support/amqp.js';
import { startWorker } from '../support/harness.js';
import { startRedisWorker } from '../support/redis-harness.js';
import { ResultReader } from '../support/results.js';

const LIMIT = 256 * 1024;
const results = new ResultReader();
afterAll(() => results.close());

async function deadLetterReasons(broker: Broker, queue: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  await broker.take(`${queue}.dead_letter`, 100, async (d) => {
    out.set(
      String(d.raw.properties.correlationId),
      String((d.raw.properties.headers as Record<string, unknown> | undefined)?.['x-dead-letter-reason']),
    );
  });
  return out;
}

function message(id: string, body: Buffer, headers: Record<string, unknown> = {}) {
  return {
    body,
    properties: {
      contentType: 'application/json',
      contentEncoding: 'utf-8',
      correlationId: id,
      headers: { lang: 'py', task: 'test.add', id, root_id: id, retries: 0, ...headers },
      deliveryMode: 2 as const,
      priority: 0,
    },
  };
}

describe.each([
  [
    'RabbitMQ',
    () => startWorker({ env: { CELERY_RESULT_BACKEND: REDIS_URL, SMARTER_WORKER_MAX_BODY_SIZE: String(LIMIT) } }),
  ],
  ['Redis', () => startRedisWorker({ env: { SMARTER_WORKER_MAX_BODY_SIZE: String(LIMIT) } })],
] as const)('own wiring: on %s', (_name, start) => {
  test('a body over the limit and a zlib bomb are dead-lettered undecoded with the size in the reason; the next task runs', async () => {
    const h = await start();
    try {
      const big = randomUUID();
      const bomb = randomUUID();
      const kwargs = { x: 1, y: 2 };
      await h.broker.send(
        h.queue,
        message(big, Buffer.from(JSON.stringify([[], { ...kwargs, pad: 'x'.repeat(LIMIT) }, {}]))),
      );
      await h.broker.send(
        h.queue,
        message(
          bomb,
          zlib.deflateSync(Buffer.from(JSON.stringify([[], { ...kwargs, pad: 'y'.repeat(64 * LIMIT) }, {}]))),
          { compression: 'application/x-gzip' },
        ),
      );
      const next = await h.worker.publisher.apply('test.add', [20, 22], {});
      expect((await results.ready(next)).result).toBe(42);
      let reasons = new Map<string, string>();
      for (let i = 0; i < 100 && reasons.size < 2; i++) {
        reasons = await deadLetterReasons(h.broker, h.queue);
        if (reasons.size < 2) await new Promise((r) => setTimeout(r, 100));
      }
      expect(reasons.get(big)).toMatch(new RegExp(`^body: the body is \\d+ bytes, over the limit of ${LIMIT} bytes`));
      expect(reasons.get(bomb)).toContain(`decompresses to more than the limit of ${LIMIT} bytes`);
    } finally {
      await h.stop();
    }
  });
});
