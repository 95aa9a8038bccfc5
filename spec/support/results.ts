/** Reads what the worker stored in the real Redis result backend. */
import { Redis } from 'ioredis';
import { REDIS_URL } from './amqp.js';
import { waitFor } from './wait.js';

export class ResultReader {
  private readonly redis = new Redis(REDIS_URL);
  private readonly ids: string[] = [];

  async meta(id: string): Promise<Record<string, unknown> | undefined> {
    this.ids.push(id);
    const v = await this.redis.get(`celery-task-meta-${id}`);
    return v === null ? undefined : (JSON.parse(v) as Record<string, unknown>);
  }

  /** Waits for a ready state (SUCCESS, FAILURE, REVOKED). */
  async ready(id: string, timeoutMs = 15_000): Promise<Record<string, unknown>> {
    return waitFor(async () => {
      const m = await this.meta(id);
      return m && ['SUCCESS', 'FAILURE', 'REVOKED'].includes(String(m.status)) ? m : undefined;
    }, timeoutMs);
  }

  async close(): Promise<void> {
    if (this.ids.length > 0) await this.redis.del(...this.ids.map((id) => `celery-task-meta-${id}`));
    await this.redis.quit();
  }
}
