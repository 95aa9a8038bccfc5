/** A RabbitMQ node of the test's own: the benchmarks' launcher (bench/rabbit-node.ts), shared with the tests. */
export { type RabbitNode, type RabbitNodeOptions, freePort, startRabbitNode } from '../../bench/rabbit-node.js';
