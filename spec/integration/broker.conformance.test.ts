/** The broker contract on RabbitMQ: the AMQP broker as `create-broker.ts` builds it for an amqp:// URL. */
import { createBroker } from '../../lib/broker/create-broker.js';
import { nullLogger } from '../../lib/logger.js';
import { randomUUID } from 'node:crypto';
import type { Broker } from '../../lib/broker/broker.js';
import { AMQP_URL, closeConnectionNamed, deleteQueues } from '../support/amqp.js';
import { describeBrokerConformance } from '../support/broker-conformance.js';
import { waitFor } from '../support/wait.js';

const names = new WeakMap<Broker, string>();

describeBrokerConformance('AMQP (RabbitMQ)', {
  create: () => {
    const connectionName = `conformance-${randomUUID().slice(0, 8)}`;
    const b = createBroker({ url: AMQP_URL, logger: nullLogger(), connectionName, reconnectInitialMs: 50 });
    names.set(b, connectionName);
    return b;
  },
  remove: deleteQueues,
  // RabbitMQ closes the client's connection (rabbitmqctl close_connection); the broker reconnects by itself.
  crash: async (b) => {
    const name = names.get(b);
    if (!name) throw new Error('not a broker of this fixture');
    await closeConnectionNamed(name, 'conformance: connection lost');
    await waitFor(() => !b.connected, 20_000, { stepMs: 10, what: 'the connection lost' });
    await waitFor(() => b.connected, 20_000, { what: 'the connection back' });
  },
});
