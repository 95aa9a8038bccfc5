/** Which deliveries run and which publishes in doubt are sent again (copies.ts): one run per attempt and park. */
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

/** Copies that handed on a countdown's message and parked it, then lost the connection before the park's confirm. */
function parkedThenLost(id: string): Copies {
  const c = new Copies();
  expect(c.admit(`${id}:0:direct`, false)).toBeUndefined();
  c.publishing(`${id}:0:parked`);
  c.reconnected();
  return c;
}

/** The countdown's message, back unacked after the loss, is admitted to run and parked again (a new park publish). */
function backAndParkedAgain(c: Copies, id: string): void {
  expect(c.admit(`${id}:0:direct`, true)).toBeUndefined();
  c.publishing(`${id}:0:parked`);
}

describe('Copies: direct messages', () => {
  test('the second copy of a message sent again is discarded, once; its first copy runs', () => {
    const c = new Copies();
    expect(c.doubt('a:1:direct')).toBe('send');
    expect(c.admit('a:1:direct', false)).toBeUndefined();
    expect(c.admit('a:1:direct', false)).toBe('second copy');
    expect(c.admit('a:1:direct', false)).toBeUndefined();
    expect(c.discarded).toBe(1);
  });

  test('a message not sent again runs; so does one delivered again that was not acked here', () => {
    const c = new Copies();
    expect(c.admit('b:0:direct', false)).toBeUndefined();
    expect(c.admit('b:0:direct', false)).toBeUndefined();
    expect(c.admit('c:0:direct', true)).toBeUndefined();
    expect(c.admit(undefined, false)).toBeUndefined();
  });

  test('a message acked here and delivered again (its ack lost with the connection) is not run again', () => {
    const c = new Copies();
    expect(c.admit('e:0:direct', false)).toBeUndefined();
    c.acked('e:0:direct');
    expect(c.admit('e:0:direct', true)).toBe('acked before');
  });

  test('a direct publish in doubt whose copy was delivered here is held by the broker, not sent', () => {
    const c = new Copies();
    c.admit('d:3:direct', false);
    expect(c.doubt('d:3:direct')).toBe('held');
  });

  test('bounded: the oldest keys are forgotten', () => {
    const c = new Copies(2);
    for (const k of ['x:0:direct', 'y:0:direct', 'z:0:direct']) c.admit(k, false);
    expect(c.doubt('x:0:direct')).toBe('send');
    expect(c.doubt('z:0:direct')).toBe('held');
  });
});

describe('Copies: a countdown whose park was left in doubt', () => {
  test('its message back unacked runs at once (its time has come): the parked copy the broker held is discarded', () => {
    const c = parkedThenLost('f');
    expect(c.admit('f:0:direct', true)).toBeUndefined();
    c.acked('f:0:direct');
    expect(c.admit('f:0:parked', false)).toBe('ran here');
    // Even when the broker had pushed it to the lost connection's consumer first.
    expect(c.admit('f:0:parked', true)).toBe('ran here');
  });

  test('its message back unacked and in hand here (held, not yet run): the parked copy is discarded too', () => {
    const c = parkedThenLost('f2');
    expect(c.admit('f2:0:direct', true)).toBeUndefined();
    expect(c.admit('f2:0:parked', false)).toBe('ran here');
  });

  test('its parked copy arrives first and runs: its message, back unacked, is discarded', () => {
    const c = parkedThenLost('g');
    expect(c.admit('g:0:parked', false)).toBeUndefined();
    expect(c.admit('g:0:direct', true)).toBe('parked before');
  });

  test('its message back unacked is parked again: of the two parked copies the first runs, the second is discarded', () => {
    const c = parkedThenLost('h');
    backAndParkedAgain(c, 'h');
    c.acked('h:0:direct');
    expect(c.admit('h:0:parked', false)).toBeUndefined();
    expect(c.admit('h:0:parked', false)).toBe('second copy');
  });

  test('the broker did not hold it and its message is parked again: that one parked copy runs', () => {
    const c = parkedThenLost('h2');
    backAndParkedAgain(c, 'h2');
    expect(c.admit('h2:0:parked', false)).toBeUndefined();
  });

  test('not sent again while its message, left unacked on the lost connection, has still to come back', () => {
    const c = parkedThenLost('i');
    expect(c.doubt('i:0:parked')).toBe('made again');
  });

  test('not sent again once its message came back (run, or parked again) or its parked copy arrived', () => {
    const ran = parkedThenLost('j');
    ran.admit('j:0:direct', true);
    ran.acked('j:0:direct');
    expect(ran.doubt('j:0:parked')).toBe('made again');

    const reparked = parkedThenLost('k');
    backAndParkedAgain(reparked, 'k');
    reparked.acked('k:0:direct');
    expect(reparked.doubt('k:0:parked')).toBe('made again');

    const arrived = parkedThenLost('l');
    arrived.admit('l:0:parked', false);
    expect(arrived.doubt('l:0:parked')).toBe('held');
  });

  test('a park not made from a message here (a retry) is sent again: of its two copies the first runs', () => {
    const c = new Copies();
    c.publishing('m:1:parked');
    c.reconnected();
    expect(c.doubt('m:1:parked')).toBe('send');
    expect(c.admit('m:1:parked', false)).toBeUndefined();
    expect(c.admit('m:1:parked', false)).toBe('second copy');
  });
});

describe('Copies: a countdown without doubt', () => {
  test('its message handed on and parked: the parked copy runs, and so does a copy parked again from it', () => {
    const c = new Copies();
    expect(c.admit('n:0:direct', false)).toBeUndefined();
    c.publishing('n:0:parked');
    c.acked('n:0:direct');
    expect(c.admit('n:0:parked', false)).toBeUndefined();
    // Due a little later than the level released it: parked again, then run.
    c.publishing('n:0:parked');
    c.acked('n:0:parked');
    expect(c.admit('n:0:parked', false)).toBeUndefined();
  });

  test('a parked copy acked here and delivered again (its ack lost) is not run again; parked again, it runs', () => {
    const c = new Copies();
    expect(c.admit('r:0:parked', false)).toBeUndefined();
    c.acked('r:0:parked');
    c.reconnected();
    expect(c.admit('r:0:parked', true)).toBe('acked before');
    // Not yet due when the level released it: parked again and acked, then delivered again after a lost link.
    const early = new Copies();
    expect(early.admit('s:0:parked', false)).toBeUndefined();
    early.publishing('s:0:parked');
    early.acked('s:0:parked');
    early.reconnected();
    expect(early.admit('s:0:parked', true)).toBeUndefined();
  });

  test('a parked copy from elsewhere (parked by another worker or producer) runs', () => {
    const c = new Copies();
    expect(c.admit('o:0:parked', false)).toBeUndefined();
  });

  test('a parked copy in hand, requeued, runs when delivered again; left unacked on a lost connection too', () => {
    const c = new Copies();
    expect(c.admit('p:0:parked', false)).toBeUndefined();
    expect(c.admit('p:0:parked', true)).toBeUndefined();
    c.reconnected();
    expect(c.admit('p:0:parked', true)).toBeUndefined();
  });

  test('its message left unacked on a lost connection before it was parked: a parked copy made elsewhere runs', () => {
    const c = new Copies();
    expect(c.admit('q:0:direct', false)).toBeUndefined();
    c.reconnected();
    expect(c.admit('q:0:parked', false)).toBeUndefined();
  });
});
