/** For `doctor`: the result backend answers (Redis PING), as `createBackend` picks it by its URL. */
import { redactUrl } from '../config/settings.js';
import type { TlsSettings } from '../config/tls.js';
import { redisTarget } from '../broker/redis/connection.js';
import { ioredis } from '../broker/redis/ioredis.js';
import { type Finding, fail, ok } from './broker-checks.js';

export async function resultBackendCheck(url: string, tls?: TlsSettings, timeoutMs = 5000): Promise<Finding> {
  const subject = 'result backend';
  if (url === '') return ok(subject, 'none configured (results are not stored)');
  if (url.startsWith('rpc://')) return ok(subject, 'rpc:// (replies through the broker, checked above)');
  const r = new (ioredis().Redis)({
    ...redisTarget(url, undefined, tls).options,
    lazyConnect: true,
    connectTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  let last = '';
  r.on('error', (err: Error) => void (last = err.message));
  try {
    await r.connect();
    await r.ping();
    return ok(subject, `${redactUrl(url)} answers`);
  } catch (err) {
    return fail(
      subject,
      `${redactUrl(url)} does not answer (${last || (err as Error).message}): check CELERY_RESULT_BACKEND (host, port, password, database) and that Redis runs`,
    );
  } finally {
    r.disconnect();
  }
}
