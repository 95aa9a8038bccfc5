/** A broker connection for a one-shot command: it fails after a while instead of retrying forever as a worker does. */
import { redactUrl } from '../config/settings.js';
import type { TlsSettings } from '../config/tls.js';
import { BrokerError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Broker } from './broker.js';
import { type RedisTransport, createBroker } from './create-broker.js';

/** `redis`: the workers' transport options, so a command sees their key prefix and sentinel master; `tls`: CELERY_BROKER_USE_SSL. */
export async function withBroker<T>(
  url: string,
  fn: (broker: Broker) => Promise<T>,
  timeoutMs = 15_000,
  redis?: RedisTransport,
  tls?: TlsSettings,
): Promise<T> {
  const last = lastErrorLogger();
  const broker = createBroker({
    url,
    logger: last.logger,
    connectionName: 'smarter-worker (command)',
    ...(redis ? { redis } : {}),
    ...(tls ? { tls } : {}),
  });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_r, reject) => {
    timer = setTimeout(() => {
      // The worker retries quietly for ever; a command says once why it gave up (a refused port, an untrusted certificate).
      const why = last.error() ? `: ${last.error()}` : '';
      reject(
        new BrokerError(`could not connect to the broker at ${redactUrl(url)} within ${timeoutMs / 1000} s${why}`),
      );
    }, timeoutMs);
  });
  try {
    await Promise.race([broker.connect(), timeout]);
    clearTimeout(timer);
    return await fn(broker);
  } finally {
    clearTimeout(timer);
    await broker.close();
  }
}

/** A silent logger that keeps the error of the last warning (a failed connection attempt). */
function lastErrorLogger(): { logger: Logger; error: () => string | undefined } {
  let error: string | undefined;
  const logger: Logger = {
    error: () => undefined,
    warn: (_m, meta) => {
      if (typeof meta?.error === 'string') error = meta.error;
    },
    info: () => undefined,
    debug: () => undefined,
    child: () => logger,
    isLevelEnabled: () => false,
  };
  return { logger, error: () => error };
}
