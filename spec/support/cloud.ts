/**
 * The real cloud adapters (`openCloud`) for tests, configured from an environment as the worker is: pass the
 * stand-ins' settings (`smtp.env`, `SMARTER_DNS_SERVERS: dns.server`); AWS and Kubernetes read
 * `process.env` (see `useMotoEnv`, `KUBECONFIG`) on their first call. Nothing connects until a call is made.
 */
import { loadConfig } from '../../lib/config/settings.js';
import { createLogger, nullLogger, type Logger } from '../../lib/logger.js';
import { openCloud } from '../../tasks/cloud/index.js';
import type { CloudDeps } from '../../tasks/cloud/ports.js';
import { CLOUD_SETTINGS } from '../../tasks/cloud/settings.js';

export function testLogger(): Logger {
  return process.env.TEST_LOG ? createLogger({ level: 'debug', json: false }) : nullLogger();
}

export function testCloud(env: Record<string, string> = {}, logger: Logger = testLogger()): CloudDeps {
  return openCloud(loadConfig(CLOUD_SETTINGS, env).values, logger);
}

export interface LogLine {
  level: string;
  message: string;
  meta: Record<string, unknown>;
}

/** A debug-level logger that keeps every line (child bindings merged into meta), to assert what is logged. */
export function recordingLogger(): { logger: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const make = (bindings: Record<string, unknown>): Logger => {
    const log = (level: string) => (message: string, meta?: Record<string, unknown>) => {
      lines.push({ level, message, meta: { ...bindings, ...meta } });
    };
    return {
      error: log('error'),
      warn: log('warn'),
      info: log('info'),
      debug: log('debug'),
      child: (more) => make({ ...bindings, ...more }),
      isLevelEnabled: () => true,
    };
  };
  return { logger: make({}), lines };
}
