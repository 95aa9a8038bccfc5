/**
 * Celery's `revoke_by_stamped_headers` for messages that come later (Celery's `revoked_stamps`, checked by
 * `Request.revoked`): after the command, a message carrying a revoked stamp value is discarded as REVOKED, not
 * run; one with another value, or without stamps, runs. On the in-memory broker, the command sent to the command
 * table as the pidbox hands it over.
 */
import { randomUUID } from 'node:crypto';
import * as z from 'zod';
import { type CommandContext, controlCommands } from '../../lib/control/commands.js';
import { nullLogger } from '../../lib/logger.js';
import { encodeTaskMessage } from '../../lib/protocol/encode.js';
import { defineTask } from '../../lib/registry/define-task.js';
import { noEvents } from '../../lib/worker/events.js';
import { MemoryBroker, MemoryStore } from '../support/memory-broker.js';
import { memoryConfig, memoryWorker } from '../support/memory-worker.js';

const Q = 'stamps';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('own wiring: a message that arrives after revoke_by_stamped_headers with a matching stamp is not run', async () => {
  const broker = new MemoryBroker(new MemoryStore());
  const ran: string[] = [];
  const revoked: string[] = [];
  const values = memoryConfig(Q, {});
  const { worker, app } = memoryWorker({
    config: values,
    tasks: [
      defineTask({ name: 'stamps.run', queue: Q, params: z.object({ n: z.string() }), run: (p) => ran.push(p.n) }),
    ],
    defaultQueue: Q,
    broker,
    events: { ...noEvents, revoked: (id) => void revoked.push(id) },
  });
  const commands = controlCommands({
    worker,
    nodeName: worker.nodeName,
    logger: nullLogger(),
  } as unknown as CommandContext);
  const send = async (n: string, stamps?: Record<string, unknown>) => {
    const id = randomUUID();
    await broker.send(
      Q,
      encodeTaskMessage({
        id,
        task: 'stamps.run',
        args: [],
        kwargs: { n },
        ...(stamps ? { stampedHeaders: Object.keys(stamps), stamps } : {}),
      }),
    );
    return id;
  };
  await app.start();
  try {
    expect(commands.revoke_by_stamped_headers?.({ headers: { mystamp: 'bad' }, terminate: false })).toEqual({
      ok: "headers {'mystamp': ['bad']} flagged as revoked, but not terminated",
    });
    const badId = await send('bad', { mystamp: 'bad' });
    const listId = await send('bad-in-list', { mystamp: ['x', 'bad'] });
    await send('good', { mystamp: 'good' });
    await send('plain');
    await send('other-stamp', { other: 'bad' });
    for (let i = 0; i < 200 && ran.length + revoked.length < 5; i++) await sleep(10);
    expect(ran.sort()).toEqual(['good', 'other-stamp', 'plain']);
    expect(revoked.sort()).toEqual([badId, listId].sort());
  } finally {
    await app.shutdown();
  }
});
