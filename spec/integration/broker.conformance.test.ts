/** The broker contract on RabbitMQ: the AMQP broker as `create-broker.ts` builds it for an amqp:// URL. */
import { createBroker } from '../../lib/broker/create-broker.js';
import { nullLogger } from '../../lib/logger.js';
import { AMQP_URL, deleteQueues } from '../support/amqp.js';
import { describeBrokerConformance } from '../support/broker-conformance.js';


describeBrokerConformance('AMQP (RabbitMQ)', {
  create: () => createBroker({ url: AMQP_URL, logger: nullLogger(), connectionName: 'conformance' }),
  remove: deleteQueues,
});
