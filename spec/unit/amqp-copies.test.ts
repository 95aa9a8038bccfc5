/** A second copy of a task message sent again after a lost confirm is discarded; nothing else is (copies.ts). */
import { Copies, copyKey } from '../../lib/broker/amqp/copies.js';

const headers = (id: string, retries: number) => ({ id, task: 'tasks.add', retries });

describe('copyKey', () => {
  test('a task message by id, retries and route: a countdown parked in the delay levels is not the message that asked for it', () => {
    expect(copyKey({ headers: headers('a', 2), exchange: '' })).toBe('a:2:direct');
    expect(copyKey({ headers: headers('a', 2), exchange: 'celery_delayed_27' })).toBe('a:2:parked');
    expect(copyKey({ headers: headers('a', 2), exchange: 'celery_delayed_delivery' })).toBe('a:2:parked');
    expect(copyKey({ headers: { id: 'e' }, exchange: 'celeryev' })).toBeUndefined();
    expect(copyKey({ headers: undefined, exchange: '' })).toBeUndefined();
  });
});

describe('Copies', () => {
  test('the second copy of a message sent again is discarded, once; its first copy runs, whichever comes first', () => {
    const c = new Copies();
    c.expectTwice('a:1:direct');
    expect(c.admit('a:1:direct', false)).toBeUndefined();
    expect(c.admit('a:1:direct', false)).toBe('second copy');
    expect(c.discarded).toBe(1);
  });

  test('a message not sent again runs; so does one delivered again that was not acked here', () => {
    const c = new Copies();
    expect(c.admit('b:0:direct', false)).toBeUndefined();
    expect(c.admit('b:0:direct', false)).toBeUndefined();
    c.expectTwice('c:0:direct');
    expect(c.admit('c:0:direct', false)).toBeUndefined();
    expect(c.admit('c:0:direct', true)).toBeUndefined();
    expect(c.admit(undefined, false)).toBeUndefined();
  });

  test('a message acked here and delivered again (its ack lost with the connection) is not run again', () => {
    const c = new Copies();
    expect(c.admit('e:0:direct', false)).toBeUndefined();
    c.acked('e:0:direct');
    expect(c.admit('e:0:direct', true)).toBe('acked before');
  });

  test('a countdown parked for a message that came back unacked is made again from it', () => {
    const c = new Copies();
    expect(c.madeAgain('f:0:parked')).toBe(false);
    expect(c.admit('f:0:direct', true)).toBeUndefined();
    expect(c.madeAgain('f:0:parked')).toBe(true);
  });

  test('a copy already delivered says the broker had it', () => {
    const c = new Copies();
    expect(c.arrived('d:3:parked')).toBe(false);
    c.admit('d:3:parked', false);
    expect(c.arrived('d:3:parked')).toBe(true);
  });

  test('bounded: the oldest keys are forgotten', () => {
    const c = new Copies(2);
    for (const k of ['x', 'y', 'z']) c.admit(k, false);
    expect(c.arrived('x')).toBe(false);
    expect(c.arrived('z')).toBe(true);
  });
});
