/** A delivery made by hand, for a unit test of what is done with one: live, unsettled, from queue `q`. */
import type { Delivery } from '../../lib/broker/broker.js';

/** A JSON message of id `1` on queue `q`; its ack and reject do nothing unless `over` gives them. */
export function fakeDelivery(over: Partial<Delivery> = {}): Delivery {
  return {
    raw: { body: Buffer.from('{}'), properties: { contentType: 'application/json', headers: { id: '1' } } },
    queue: 'q',
    exchange: '',
    routingKey: 'q',
    redelivered: false,
    live: true,
    settled: false,
    ack: () => undefined,
    reject: () => undefined,
    ...over,
  };
}
