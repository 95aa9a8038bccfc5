/**
 * winston logging: one JSON object per line when stdout is not a TTY (what log collectors parse), readable
 * lines on a terminal. Child loggers carry a task's identity (`name[id]`, queue, retries) on every line.
 */
import winston from 'winston';

export type LogLevel = 'error' | 'warn' | 'info' | 'debug';

export interface Logger {
  error(message: string, meta?: Record<string, unknown>): void;
  warn(message: string, meta?: Record<string, unknown>): void;
  info(message: string, meta?: Record<string, unknown>): void;
  debug(message: string, meta?: Record<string, unknown>): void;
  child(bindings: Record<string, unknown>): Logger;
  isLevelEnabled(level: LogLevel): boolean;
}

/**
 * A child logger created on first use: a task that logs nothing (the common case) costs no logger.
 */
export function lazyChild(parent: Logger, bindings: () => Record<string, unknown>): Logger {
  let child: Logger | undefined;
  const get = () => (child ??= parent.child(bindings()));
  return {
    error: (m, meta) => get().error(m, meta),
    warn: (m, meta) => get().warn(m, meta),
    info: (m, meta) => {
      if (parent.isLevelEnabled('info')) get().info(m, meta);
    },
    debug: (m, meta) => {
      if (parent.isLevelEnabled('debug')) get().debug(m, meta);
    },
    child: (more) => get().child(more),
    isLevelEnabled: (level) => parent.isLevelEnabled(level),
  };
}

/** Celery's level names (`--loglevel=INFO`, `WARNING`, `CRITICAL`) mapped onto ours. */
export function parseLogLevel(text: string): LogLevel | undefined {
  switch (text.trim().toLowerCase()) {
    case 'error':
    case 'critical':
    case 'fatal':
      return 'error';
    case 'warn':
    case 'warning':
      return 'warn';
    case 'info':
      return 'info';
    case 'debug':
      return 'debug';
    default:
      return undefined;
  }
}

export function createLogger(options: { level: LogLevel; json?: boolean; silent?: boolean }): Logger {
  const json = options.json ?? !process.stdout.isTTY;
  const format = json
    ? winston.format.combine(winston.format.timestamp(), winston.format.errors({ stack: true }), winston.format.json())
    : winston.format.combine(
        winston.format.timestamp(),
        winston.format.printf(({ timestamp, level, message, ...meta }) => {
          const rest = Object.keys(meta).length > 0 ? ` ${JSON.stringify(meta)}` : '';
          return `[${String(timestamp)}: ${level.toUpperCase()}] ${String(message)}${rest}`;
        }),
      );
  const logger = winston.createLogger({
    level: options.level,
    format,
    silent: options.silent ?? false,
    transports: [new winston.transports.Console({ stderrLevels: [] })],
  });
  if (!options.silent) processLoggers.add(logger);
  memoizeLevelChecks(logger);
  return logger;
}

/**
 * winston's `isLevelEnabled` walks the transports on every call, and a run asks it once per task; the
 * answers are kept until the logger's level changes (the transports' levels are fixed at creation).
 */
function memoizeLevelChecks(logger: winston.Logger): void {
  const check = logger.isLevelEnabled.bind(logger);
  let level = logger.level;
  const answers = new Map<string, boolean>();
  logger.isLevelEnabled = (l: string) => {
    if (logger.level !== level) {
      level = logger.level;
      answers.clear();
    }
    let yes = answers.get(l);
    if (yes === undefined) {
      yes = check(l);
      answers.set(l, yes);
    }
    return yes;
  };
}

/** The process's loggers, so that an exit can flush them all. */
const processLoggers = new Set<winston.Logger>();

/**
 * Waits (at most `timeoutMs`) until every line logged so far has left winston's streams, which buffer once
 * a burst outruns the transport; `process.exit` would drop what is still buffered.
 */
export async function flushLogs(timeoutMs = 2000): Promise<void> {
  const loggers = [...processLoggers];
  processLoggers.clear();
  const flushed = loggers.map(
    (l) =>
      new Promise<void>((resolve) => {
        l.on('finish', () => setImmediate(resolve));
        l.end();
      }),
  );
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([Promise.all(flushed), new Promise<void>((r) => (timer = setTimeout(r, timeoutMs)))]);
  clearTimeout(timer);
}

/** Ends a program with `code` once its logs are flushed. */
export function exitFlushed(code: number): void {
  void flushLogs().finally(() => process.exit(code));
}

/**
 * A program's fatal error: in the log (as JSON when logs are JSON, so collectors see why it stopped) and
 * on stderr, then exit 1 after the last lines are flushed.
 */
export function exitFatal(program: string, err: unknown): void {
  const e = err instanceof Error ? err : new Error(String(err));
  for (const l of processLoggers) l.error(`${program} stopped by a fatal error: ${e.message}`, { error: e.stack, fatal: true });
  // A configuration problem is the operator's to fix: its sentence says what and where, a stack would not help.
  const configProblem = (e as { code?: unknown }).code === 'CONFIG_INVALID';
  process.stderr.write(`${program}: ${configProblem ? e.message : (e.stack ?? e.message)}\n`);
  exitFlushed(1);
}

/** A logger that drops everything, for unit tests. */
export function nullLogger(): Logger {
  return createLogger({ level: 'error', silent: true });
}
