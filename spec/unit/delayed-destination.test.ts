/** The queue a delay-level message goes back to (kombu's native_delayed_delivery routing key), for `delayed purge|release`. */
import { delayedDestination } from '../../lib/broker/amqp/delayed-tools.js';
import { delayRoutingKey } from '../../lib/broker/amqp/topology.js';

test('the destination is the routing key after the 28 bit words, dots in the queue name kept; anything else is no delay-level message', () => {
  expect(delayedDestination(delayRoutingKey(300, 'celery'))).toBe('celery');
  expect(delayedDestination(delayRoutingKey(1, 'a.b.c'))).toBe('a.b.c');
  expect(delayedDestination('celery')).toBeNull();
  expect(delayedDestination(`${'0.'.repeat(27)}2.q`)).toBeNull();
});
