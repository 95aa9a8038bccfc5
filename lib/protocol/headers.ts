/**
 * The names of the message headers this worker writes and reads beyond Celery's own: the dead-letter copy's
 * (reason, original queue, exchange and routing key, who and when), the forward's (who forwarded it, from
 * which queue), and RabbitMQ's record of its own dead-lettering. One module, so that the writer and the
 * dead-letter tools cannot disagree on a name.
 */

/** The headers a dead-letter copy carries, on every broker (the dead-letter tools read them). */
export const DEAD_LETTER_HEADER = {
  reason: 'x-dead-letter-reason',
  originalQueue: 'x-original-queue',
  originalExchange: 'x-original-exchange',
  originalRoutingKey: 'x-original-routing-key',
  by: 'x-dead-lettered-by',
  at: 'x-dead-lettered-at',
} as const;

/** The node that forwarded a message of a task it does not implement, and the queue it came from. */
export const FORWARDED_BY_HEADER = 'x-smarter-forwarded-by';
export const FORWARDED_FROM_HEADER = 'x-smarter-forwarded-from';

/** RabbitMQ's list of a message's deaths (expired, rejected, over the queue's length) when it dead-letters one itself. */
export const RABBITMQ_DEATH_HEADER = 'x-death';
