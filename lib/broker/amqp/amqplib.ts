/**
 * The one way into amqplib: the codec extension is installed first, then amqplib is required, so every
 * amqplib connection in the process reads all of py-amqp's and RabbitMQ's field types. A `require` rather
 * than an `import`: a test runner may link a static import of a CommonJS package before this module runs.
 */
import type * as Amqplib from 'amqplib';
import { createRequire } from 'node:module';
import './amqp-codec.js';

const amqp = createRequire(import.meta.url)('amqplib') as typeof Amqplib;

export default amqp;
