/**
 * The real cloud adapters (`openCloud`) for tests, configured from an environment as the worker is: pass the
 * stand-ins' settings (`smtp.env`, `SMARTER_DNS_SERVERS: dns.server`); AWS and Kubernetes read
 * `process.env` (see `useMotoEnv`, `KUBECONFIG`) on their first call. Nothing connects until a call is made.
 */
import { loadConfig } from '../../lib/config/settings.js';
import { createLogger, nullLogger, type Logger } from '../../lib/logger.js';
import { openCloud } from '../../tasks/cloud/index.js';
import { CloudError } from '../../tasks/cloud/errors.js';
import type { CloudDeps } from '../../tasks/cloud/cloud-deps.js';
import { CLOUD_SETTINGS } from '../../tasks/cloud/settings.js';

export function testLogger(): Logger {
  return process.env.TEST_LOG ? createLogger({ level: 'debug', json: false }) : nullLogger();
}

export function testCloud(env: Record<string, string> = {}, logger: Logger = testLogger()): CloudDeps {
  return openCloud(loadConfig(CLOUD_SETTINGS, env).values, logger);
}

/** The CloudError a call must fail with; anything else (or success) fails the test with what happened. */
export async function cloudFailure(p: Promise<unknown>): Promise<CloudError> {
  const err: unknown = await p.then(
    () => new Error('expected a CloudError, the call succeeded'),
    (e: unknown) => e,
  );
  if (!(err instanceof CloudError)) throw err;
  return err;
}
