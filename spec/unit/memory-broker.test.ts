/** The in-memory broker keeps the same contract as RabbitMQ (and Redis): the one conformance suite, in memory. */
import { describeBrokerConformance } from '../support/broker-conformance.js';
import { MemoryBroker, MemoryStore } from '../support/memory-broker.js';

const store = new MemoryStore();
afterAll(() => store.clear());

describeBrokerConformance('the in-memory broker (own wiring)', {
  create: () => new MemoryBroker(store),
  crash: async (b) => {
    const m = b as MemoryBroker;
    m.crash();
    m.restore();
  },
});
