/** A logger that keeps its lines, for tests that check what an operator is told. */
import type { LogLevel, Logger } from '../../lib/logger.js';

export interface LogLine {
  level: LogLevel;
  message: string;
  meta: Record<string, unknown> | undefined;
}

export function collectingLogger(lines: LogLine[] = []): Logger & { lines: LogLine[] } {
  const make = (bindings: Record<string, unknown>): Logger => ({
    error: (message, meta) => lines.push({ level: 'error', message, meta: { ...bindings, ...meta } }),
    warn: (message, meta) => lines.push({ level: 'warn', message, meta: { ...bindings, ...meta } }),
    info: (message, meta) => lines.push({ level: 'info', message, meta: { ...bindings, ...meta } }),
    debug: (message, meta) => lines.push({ level: 'debug', message, meta: { ...bindings, ...meta } }),
    child: (more) => make({ ...bindings, ...more }),
    isLevelEnabled: () => true,
  });
  return Object.assign(make({}), { lines });
}
