/**
 * Against the real worker on real RabbitMQ: what Celery refuses is refused to the
 * dead-letter queue with a reason (never run with changed data), and a declared utf-16 body runs intact.
 */
import { randomUUID } from 'node:crypto';
import { publishRaw, withChannel } from '../support/amqp.js';
import { type Harness, workerForFile } from '../support/harness.js';
import type { ResultReader } from '../support/results.js';

let h: Harness;
let results: ResultReader;
workerForFile({}, (w) => ({ h, results } = w));

const headers = (id: string) => ({ task: 'test.echo', id, lang: 'py', retries: 0, root_id: id });

async function send(body: Buffer, props: { contentType?: string; contentEncoding?: string }): Promise<string> {
  const id = randomUUID();
  await publishRaw(h.queue, body, { ...props, correlationId: id, headers: headers(id) });
  return id;
}

async function deadLetterReason(id: string): Promise<string | undefined> {
  for (let i = 0; i < 100; i++) {
    const found = await withChannel(async (ch) => {
      let reason: string | undefined;
      for (;;) {
        const m = await ch.get(`${h.queue}.dead_letter`, { noAck: false });
        if (m === false) break;
        if (m.properties.correlationId === id) reason = String(m.properties.headers?.['x-dead-letter-reason']);
      }
      ch.nackAll(true);
      return reason;
    });
    if (found !== undefined) return found;
    await new Promise((r) => setTimeout(r, 100));
  }
  return undefined;
}

test.each([
  [
    'a body that is not valid UTF-8',
    Buffer.concat([Buffer.from('[["'), Buffer.from([0xff, 0xfe, 0x41]), Buffer.from('"], {}, {}]')]),
    { contentType: 'application/json', contentEncoding: 'utf-8' },
    /body: the body is not valid utf-8/,
  ],
  [
    'an unknown content_encoding',
    Buffer.from('[["x"], {}, {}]'),
    { contentType: 'application/json', contentEncoding: 'nonsense' },
    /unsupported content_encoding "nonsense"/,
  ],
  ['no content type', Buffer.from('[["x"], {}, {}]'), { contentEncoding: 'utf-8' }, /the message has no content type/],
  [
    'arguments nested 10,000 levels deep',
    Buffer.from(`[[${'['.repeat(10_000)}${']'.repeat(10_000)}], {}, {}]`),
    { contentType: 'application/json', contentEncoding: 'utf-8' },
    /nested deeper than 256 levels/,
  ],
])(
  'own wiring: %s is refused to the dead-letter queue with a reason, and never runs',
  async (_name, body, props, reason) => {
    const id = await send(body, props);
    expect(await deadLetterReason(id)).toMatch(reason);
    expect(await results.meta(id)).toBeUndefined();
  },
);

test('own wiring: a declared utf-16 body is decoded faithfully and runs with its text intact', async () => {
  const id = await send(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('[["héllo ✓"], {}, {}]', 'utf16le')]), {
    contentType: 'application/json',
    contentEncoding: 'utf-16',
  });
  expect(await results.ready(id)).toMatchObject({ status: 'SUCCESS', result: { args: ['héllo ✓'] } });
});
