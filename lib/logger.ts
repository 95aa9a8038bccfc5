/**
 * Logging: one JSON object per line when stdout is not a TTY (what log collectors parse), readable lines on
 * a terminal. Child loggers carry a task's identity (`name[id]`, queue, retries) on every line.
 *
 * The lines are winston's (`format.combine(timestamp(), errors({ stack: true }), json())` on its Console
 * transport, which this replaced): the same keys, sorted, by the same stringifier, the same levels. winston
 * and its 30 modules cost ~50 ms of every start-up; a line written here also skips its stream pipeline.
 */
import { EOL } from 'node:os';
import { configure } from 'safe-stable-stringify';

export type LogLevel = 'error' | 'warn' | 'info' | 'debug';

export interface Logger {
  error(message: string, meta?: Record<string, unknown>): void;
  warn(message: string, meta?: Record<string, unknown>): void;
  info(message: string, meta?: Record<string, unknown>): void;
  debug(message: string, meta?: Record<string, unknown>): void;
  child(bindings: Record<string, unknown>): Logger;
  isLevelEnabled(level: LogLevel): boolean;
}

/** Keys added to every line as it is logged (tracing's `trace_id` and `span_id`); none unless tracing is on. */
let lineFields: (() => Record<string, unknown> | undefined) | undefined;

/** Adds the keys `fields()` returns, at the moment of logging, to every line from now on (undefined: none). */
export function setLineFields(fields: (() => Record<string, unknown> | undefined) | undefined): void {
  lineFields = fields;
}

/** npm's levels, as winston numbers them (lower is more severe). */
const SEVERITY: Record<LogLevel, number> = { error: 0, warn: 1, info: 2, debug: 5 };

/** logform's `json()`: safe-stable-stringify's defaults (sorted keys, `[Circular]`), bigints as strings. */
const stringify = configure({});
const bigintAsString = (_key: string, value: unknown): unknown =>
  typeof value === 'bigint' ? value.toString() : value;

type Line = Record<string, unknown>;

function jsonLine(info: Line): string {
  return stringify(info, bigintAsString) ?? '';
}

function textLine(info: Line): string {
  const { timestamp, level, message, ...meta } = info;
  const rest = Object.keys(meta).length > 0 ? ` ${JSON.stringify(meta)}` : '';
  return `[${String(timestamp)}: ${String(level).toUpperCase()}] ${String(message)}${rest}`;
}

/**
 * The object winston logs for `logger[level](message, meta)`: the meta, then level and message; a `message`
 * in the meta is appended to the message, its `stack` and `cause` copied (an Error's are not enumerable).
 */
function infoOf(level: LogLevel, message: string, meta: Record<string, unknown> | undefined): Line {
  if (typeof meta !== 'object' || meta === null) return { level, message };
  const info: Line = Object.assign({}, meta, { level, message });
  // As winston's template does: an object shows as [object Object].
  if (meta.message) info.message = `${message} ${meta.message as string}`;
  if (meta.stack) info.stack = meta.stack;
  if (meta.cause) info.cause = meta.cause;
  return info;
}

/** The log streams whose reader has gone (EPIPE): their lines are dropped from then on. */
const brokenStreams = new WeakSet<NodeJS.WriteStream>();
const watchedStreams = new WeakSet<NodeJS.WriteStream>();

/**
 * Whether a line can still be written to `out`. A reader that closes the pipe (a log shipper restarting, a parent
 * that gave up on the process) makes every later write fail with EPIPE, emitted as an 'error' event: unheard, it
 * would reach the process's uncaught-exception handler, whose own log line would fail the same way, forever. The
 * worker's work matters more than its log lines: they are dropped, and the tasks run and settle as usual.
 */
function writable(out: NodeJS.WriteStream): boolean {
  if (!watchedStreams.has(out)) {
    watchedStreams.add(out);
    out.on('error', () => brokenStreams.add(out));
  }
  return !brokenStreams.has(out) && !out.destroyed && !out.writableEnded;
}

class LineLogger implements Logger {
  constructor(
    private readonly level: LogLevel,
    private readonly format: (info: Line) => string,
    private readonly silent: boolean,
    private readonly out: NodeJS.WriteStream,
    /** Applied innermost child first: a line's own keys win over its bindings, a child's over its parent's. */
    private readonly write: (info: Line) => void = (info) => this.emit(info),
  ) {}

  private emit(info: Line): void {
    if (this.silent || !this.isLevelEnabled(info.level as LogLevel)) return;
    if (!writable(this.out)) return;
    // logform's `timestamp()` keeps one the line already carries.
    if (!info.timestamp) info.timestamp = new Date().toISOString();
    this.out.write(`${this.format(info)}${EOL}`);
  }

  private log(level: LogLevel, message: string, meta?: Record<string, unknown>): void {
    if (!this.isLevelEnabled(level)) return;
    const info = infoOf(level, message, meta);
    if (lineFields) Object.assign(info, lineFields());
    this.write(info);
  }

  error(message: string, meta?: Record<string, unknown>): void {
    this.log('error', message, meta);
  }
  warn(message: string, meta?: Record<string, unknown>): void {
    this.log('warn', message, meta);
  }
  info(message: string, meta?: Record<string, unknown>): void {
    this.log('info', message, meta);
  }
  debug(message: string, meta?: Record<string, unknown>): void {
    this.log('debug', message, meta);
  }

  child(bindings: Record<string, unknown>): Logger {
    const parent = this.write;
    return new LineLogger(this.level, this.format, this.silent, this.out, (info) =>
      parent(Object.assign({}, bindings, info)),
    );
  }

  isLevelEnabled(level: LogLevel): boolean {
    const given = SEVERITY[level] as number | undefined;
    return given !== undefined && given <= SEVERITY[this.level];
  }
}

/**
 * A child logger created on first use: a task that logs nothing (the common case) costs no logger. A class,
 * so that a run costs one small object rather than one closure per method.
 */
class LazyChild implements Logger {
  private logger: Logger | undefined;

  constructor(
    private readonly parent: Logger,
    private readonly bindings: () => Record<string, unknown>,
  ) {}

  private get made(): Logger {
    return (this.logger ??= this.parent.child(this.bindings()));
  }

  error(message: string, meta?: Record<string, unknown>): void {
    this.made.error(message, meta);
  }

  warn(message: string, meta?: Record<string, unknown>): void {
    this.made.warn(message, meta);
  }

  info(message: string, meta?: Record<string, unknown>): void {
    if (this.parent.isLevelEnabled('info')) this.made.info(message, meta);
  }

  debug(message: string, meta?: Record<string, unknown>): void {
    if (this.parent.isLevelEnabled('debug')) this.made.debug(message, meta);
  }

  child(bindings: Record<string, unknown>): Logger {
    return this.made.child(bindings);
  }

  isLevelEnabled(level: LogLevel): boolean {
    return this.parent.isLevelEnabled(level);
  }
}

export function lazyChild(parent: Logger, bindings: () => Record<string, unknown>): Logger {
  return new LazyChild(parent, bindings);
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

/**
 * `stream: 'stderr'` for the commands that print data on stdout (`delayed`): a script that pipes them gets the
 * data alone.
 */
export function createLogger(options: {
  level: LogLevel;
  json?: boolean;
  silent?: boolean;
  stream?: 'stdout' | 'stderr';
}): Logger {
  const out = options.stream === 'stderr' ? process.stderr : process.stdout;
  const json = options.json ?? !out.isTTY;
  const logger = new LineLogger(options.level, json ? jsonLine : textLine, options.silent ?? false, out);
  if (!options.silent) processLoggers.add(logger);
  return logger;
}

/** The process's loggers, so that a fatal error reaches every log. */
const processLoggers = new Set<Logger>();

/**
 * Waits (at most `timeoutMs`) until every line logged so far has left stdout's buffer, which fills once a
 * burst outruns the reader; `process.exit` would drop what is still buffered.
 */
export async function flushLogs(timeoutMs = 2000): Promise<void> {
  processLoggers.clear();
  const pending = [process.stdout, process.stderr].filter((s) => s.writableLength > 0);
  if (pending.length === 0) return;
  let timer: NodeJS.Timeout | undefined;
  // An empty write's callback runs once everything queued before it is written.
  await Promise.race([
    Promise.all(pending.map((s) => new Promise<void>((r) => s.write('', () => r())))),
    new Promise<void>((r) => (timer = setTimeout(r, timeoutMs))),
  ]);
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
  for (const l of processLoggers) {
    l.error(`${program} stopped by a fatal error: ${e.message}`, { error: e.stack, fatal: true });
  }
  // A configuration problem is the operator's to fix: its sentence says what and where, a stack would not help.
  const configProblem = (e as { code?: unknown }).code === 'CONFIG_INVALID';
  process.stderr.write(`${program}: ${configProblem ? e.message : (e.stack ?? e.message)}\n`);
  exitFlushed(1);
}

/** A logger that drops everything, for unit tests. */
export function nullLogger(): Logger {
  return createLogger({ level: 'error', silent: true });
}
