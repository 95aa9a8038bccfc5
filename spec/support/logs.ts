/** A logger that keeps its lines (child bindings merged into meta), for tests that check what an operator is told. */
import type { Logger } from '../../lib/logger.js';

export interface LogLine {
  level: string;
  message: string;
  meta: Record<string, unknown>;
}

export function recordingLogger(
  lines: LogLine[] = [],
  bound: Record<string, unknown> = {},
): Logger & { lines: LogLine[] } {
  const at =
    (level: string) =>
    (message: string, meta: Record<string, unknown> = {}) =>
      void lines.push({ level, message, meta: { ...bound, ...meta } });
  return {
    lines,
    error: at('error'),
    warn: at('warn'),
    info: at('info'),
    debug: at('debug'),
    child: (more) => recordingLogger(lines, { ...bound, ...more }),
    isLevelEnabled: () => true,
  };
}
