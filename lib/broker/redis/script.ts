/** A Lua script run by its SHA, loaded again when the server forgot it (after a restart or SCRIPT FLUSH). */
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

export class LuaScript {
  readonly sha: string;

  constructor(
    readonly source: string,
    readonly keyCount: number,
  ) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  async run(redis: Redis, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    if (keys.length !== this.keyCount) throw new Error(`script expects ${this.keyCount} keys, got ${keys.length}`);
    try {
      return await redis.evalsha(this.sha, this.keyCount, ...keys, ...args);
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
      return redis.eval(this.source, this.keyCount, ...keys, ...args);
    }
  }
}
