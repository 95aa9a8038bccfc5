/**
 * kombu's fanout exchanges on Redis: pub/sub, not lists. A publish goes to the channel `/{db}.<exchange>`
 * (with `/<routing key>` when there is one, `fanout_patterns`), a fanout queue is a PSUBSCRIBE of the same
 * name with AMQP's `#` as glob `*`. Celery's `celery.pidbox` broadcasts and `celeryev` events travel so;
 * a message published while nobody listens is gone, as with kombu. One subscriber connection (ioredis
 * subscribes again after a reconnect).
 */
import type { Redis } from 'ioredis';
import type { PublishProperties } from '../../protocol/encode.js';
import { type Envelope, decodeEnvelope, encodeEnvelope } from './envelope.js';
import type { KombuKeys } from './keys.js';

export type FanoutHandler = (envelope: Envelope | null, text: string, error: Error | null) => void;

export class RedisFanout {
  private readonly handlers = new Map<string, Set<FanoutHandler>>();

  constructor(
    private readonly publisher: Redis,
    private readonly subscriber: Redis,
    private readonly keys: KombuKeys,
  ) {
    subscriber.on('pmessageBuffer', (pattern: Buffer, _channel: Buffer, message: Buffer) => {
      const set = this.handlers.get(pattern.toString('utf8'));
      if (!set) return;
      const text = message.toString('utf8');
      let env: Envelope | null = null;
      let error: Error | null = null;
      try {
        env = decodeEnvelope(text);
      } catch (err) {
        error = err as Error;
      }
      for (const h of set) h(env, text, error);
    });
  }

  /** kombu `_put_fanout`. Resolves with the number of subscribers that received it. */
  async publish(exchange: string, routingKey: string, body: Buffer, properties: PublishProperties): Promise<number> {
    const { text } = encodeEnvelope(body, properties, exchange, routingKey);
    return this.publisher.publish(this.keys.fanoutTopic(exchange, routingKey), text);
  }

  /** Binds a fanout queue: returns a function that unbinds it. */
  async subscribe(exchange: string, routingKey: string, handler: FanoutHandler): Promise<() => Promise<void>> {
    const pattern = this.keys.fanoutPattern(exchange, routingKey);
    let set = this.handlers.get(pattern);
    if (!set) {
      this.handlers.set(pattern, (set = new Set()));
      await this.subscriber.psubscribe(pattern);
    }
    set.add(handler);
    return async () => {
      set.delete(handler);
      if (set.size === 0 && this.handlers.get(pattern) === set) {
        this.handlers.delete(pattern);
        await this.subscriber.punsubscribe(pattern);
      }
    };
  }
}
