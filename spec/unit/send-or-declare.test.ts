/** send-or-declare.ts and dead-letter.ts: the one answer of every caller to a send whose target was deleted. */
import type { OutgoingMessage } from '../../lib/broker/broker.js';
import { DEAD_LETTER_HEADER } from '../../lib/broker/broker.js';
import { sendDeadLetter } from '../../lib/broker/dead-letter.js';
import { sendOrDeclare } from '../../lib/broker/send-or-declare.js';
import { BrokerError, UnroutableError } from '../../lib/errors.js';
import { fakeDelivery } from '../support/delivery.js';

/** A send that fails with each of `failures` in turn, then succeeds; `log` records what ran. */
function sender(log: string[], ...failures: Error[]) {
  return async () => {
    log.push('send');
    const f = failures.shift();
    if (f) throw f;
  };
}

test('an unroutable send declares its target and is sent once more', async () => {
  const log: string[] = [];
  await sendOrDeclare(sender(log, new UnroutableError('', 'q', 'NO_ROUTE')), async () => void log.push('declare'));
  expect(log).toEqual(['send', 'declare', 'send']);
});

test('a send that succeeds declares nothing', async () => {
  const log: string[] = [];
  await sendOrDeclare(sender(log), async () => void log.push('declare'));
  expect(log).toEqual(['send']);
});

test('another failure is thrown as it is, without a declare or a second send', async () => {
  const log: string[] = [];
  const err = new BrokerError('publish was not confirmed');
  await expect(sendOrDeclare(sender(log, err), async () => void log.push('declare'))).rejects.toBe(err);
  expect(log).toEqual(['send']);
});

test('unroutable twice: the second failure is the caller’s, and there is no third send', async () => {
  const log: string[] = [];
  const second = new UnroutableError('', 'q', 'NO_ROUTE');
  await expect(
    sendOrDeclare(sender(log, new UnroutableError('', 'q', 'NO_ROUTE'), second), async () => void log.push('declare')),
  ).rejects.toBe(second);
  expect(log).toEqual(['send', 'declare', 'send']);
});

test('a declare that has nothing to declare rethrows the unroutable error it is given, and nothing is sent again', async () => {
  const log: string[] = [];
  const err = new UnroutableError('celery_delayed_27', 'x', 'NO_ROUTE');
  await expect(
    sendOrDeclare(sender(log, err), async (e) => {
      throw e;
    }),
  ).rejects.toBe(err);
  expect(log).toEqual(['send']);
});

const delivery = fakeDelivery({
  raw: {
    body: Buffer.from('{}'),
    properties: { contentType: 'application/json', contentEncoding: 'utf-8', headers: { id: '1' } },
  },
});
const why = { queue: 'q.dead_letter', reason: 'boom', by: 'w@h', at: new Date(0) };

test('a dead-letter queue is declared before its first copy only, and again when the copy finds it deleted', async () => {
  const log: string[] = [];
  const declared = new Set<string>();
  const sent: OutgoingMessage[] = [];
  let missing = false;
  const target = {
    send: async (queue: string, m: OutgoingMessage) => {
      log.push(`send ${queue}`);
      if (missing) {
        missing = false;
        throw new UnroutableError('', queue, 'NO_ROUTE');
      }
      sent.push(m);
    },
    declare: async (queue: string) => {
      log.push(`declare ${queue}`);
      declared.add(queue);
    },
    isDeclared: (queue: string) => declared.has(queue),
  };
  await sendDeadLetter(target, delivery, why);
  await sendDeadLetter(target, delivery, why);
  missing = true;
  await sendDeadLetter(target, delivery, why);
  expect(log).toEqual([
    'declare q.dead_letter',
    'send q.dead_letter',
    'send q.dead_letter',
    'send q.dead_letter',
    'declare q.dead_letter',
    'send q.dead_letter',
  ]);
  expect(sent).toHaveLength(3);
  expect(sent[0]?.body).toBe(delivery.raw.body);
  expect(sent[0]?.properties.headers).toMatchObject({
    id: '1',
    [DEAD_LETTER_HEADER.reason]: 'boom',
    [DEAD_LETTER_HEADER.originalQueue]: 'q',
    [DEAD_LETTER_HEADER.at]: '1970-01-01T00:00:00.000Z',
  });
});

test('a broker that does not remember its dead-letter queues declares before every copy', async () => {
  const log: string[] = [];
  const target = {
    send: async (q: string) => void log.push(`send ${q}`),
    declare: async (q: string) => void log.push(`declare ${q}`),
  };
  await sendDeadLetter(target, delivery, why);
  await sendDeadLetter(target, delivery, why);
  expect(log).toEqual(['declare q.dead_letter', 'send q.dead_letter', 'declare q.dead_letter', 'send q.dead_letter']);
});
