/**
 * One configuration loader for the whole process: each setting is declared once (environment variables,
 * command-line flag, parser, default, whether it is secret), and `loadConfig` reads them all, collecting
 * every problem before it fails, so an operator fixes a broken deployment in one pass.
 */
import { parseArgs } from 'node:util';
import { ConfigError } from '../errors.js';

export interface Setting<T> {
  /** Environment variables, first found wins. */
  env: readonly string[];
  /** Long flag name (without `--`) and optional one-letter short flag. */
  flag?: { long: string; short?: string; boolean?: boolean };
  default: T;
  /** How the manual (docs/configuration.md) shows a default that depends on the machine. */
  shownDefault?: string;
  parse(text: string): T;
  secret?: boolean;
  doc: string;
}

export type Settings = Record<string, Setting<unknown>>;
export type ValuesOf<S extends Settings> = { [K in keyof S]: S[K] extends Setting<infer T> ? T : never };

export class ParseError extends Error {}

export const parsers = {
  string: (t: string) => t,
  int:
    (min: number, max = Number.MAX_SAFE_INTEGER) =>
    (t: string) => {
      const n = Number(t.trim());
      if (!Number.isInteger(n) || n < min || n > max) throw new ParseError(`expected an integer from ${min} to ${max}`);
      return n;
    },
  seconds: (t: string) => {
    const n = Number(t.trim());
    if (!Number.isFinite(n) || n < 0) throw new ParseError('expected a non-negative number of seconds');
    return n;
  },
  optSeconds: (t: string) => {
    if (t.trim() === '' || /^(none|null)$/i.test(t.trim())) return null;
    const n = Number(t.trim());
    if (!Number.isFinite(n) || n <= 0) throw new ParseError('expected a positive number of seconds, or None');
    return n;
  },
  bool: (t: string) => {
    if (/^(1|true|yes|on)$/i.test(t.trim())) return true;
    if (/^(0|false|no|off|)$/i.test(t.trim())) return false;
    throw new ParseError('expected true or false');
  },
  list: (t: string) =>
    t
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s.length > 0),
  oneOf:
    <T extends string>(...choices: T[]) =>
    (t: string): T => {
      const v = t.trim().toLowerCase() as T;
      if (!choices.includes(v)) throw new ParseError(`expected one of ${choices.join(', ')}`);
      return v;
    },
};

export interface LoadResult<S extends Settings> {
  values: ValuesOf<S>;
  /** Non-flag arguments (a subcommand). */
  positionals: string[];
  /** Where each value came from, for the start-up log. */
  sources: Record<keyof S, string>;
}

export function loadConfig<S extends Settings>(
  settings: S,
  env: Record<string, string | undefined>,
  argv: readonly string[] = [],
): LoadResult<S> {
  const problems: string[] = [];
  const options: Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }> = {};
  for (const s of Object.values(settings)) {
    if (s.flag) {
      options[s.flag.long] = {
        type: s.flag.boolean ? 'boolean' : 'string',
        ...(s.flag.short ? { short: s.flag.short } : {}),
        ...(s.flag.boolean ? {} : { multiple: true }),
      };
    }
  }
  let flags: Record<string, unknown> = {};
  let positionals: string[] = [];
  try {
    const parsed = parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
    flags = parsed.values;
    positionals = parsed.positionals;
  } catch (err) {
    problems.push((err as Error).message);
  }
  const values: Record<string, unknown> = {};
  const sources: Record<string, string> = {};
  for (const [key, s] of Object.entries(settings)) {
    let text: string | undefined;
    let source = 'default';
    const fromFlag = s.flag ? flags[s.flag.long] : undefined;
    if (typeof fromFlag === 'boolean') {
      text = String(fromFlag);
      source = `--${s.flag?.long}`;
    } else if (Array.isArray(fromFlag) && fromFlag.length > 0) {
      // Repeated flags (`-Q a -Q b`) accumulate, as Celery's do.
      text = (fromFlag as string[]).join(',');
      source = `--${s.flag?.long}`;
    } else {
      for (const name of s.env) {
        const v = env[name];
        if (v !== undefined && v !== '') {
          text = v;
          source = name;
          break;
        }
      }
    }
    if (text === undefined) {
      values[key] = s.default;
    } else {
      try {
        values[key] = s.parse(text);
      } catch (err) {
        const shown = s.secret ? '<redacted>' : JSON.stringify(text);
        problems.push(`${source}=${shown}: ${(err as Error).message}`);
      }
    }
    sources[key] = source;
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return { values: values as ValuesOf<S>, positionals, sources: sources as Record<keyof S, string> };
}

/**
 * `loadConfig` for a command-line program: a configuration problem is written to stderr, prefixed with the
 * program's name, and gives null (the caller exits with 2); any other error propagates.
 */
export function loadCommandLine<S extends Settings>(
  program: string,
  settings: S,
  env: Record<string, string | undefined>,
  argv: readonly string[],
): LoadResult<S> | null {
  try {
    return loadConfig(settings, env, argv);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${program}: ${err.message}\n`);
    return null;
  }
}

/**
 * Hides the password of a URL (`amqp://user:***@host`), for logs; of every URL of a `;`-separated failover
 * list (`amqp://u:***@a;amqp://u:***@b`), since each may carry its own.
 */
export function redactUrl(url: string): string {
  return (
    url
      .split(';')
      // Up to the URL's last '@': a password written unencoded may hold '/', '@' or '#', and must still go.
      .map((one) =>
        one.replace(
          /^(\s*[a-z][a-z0-9+.-]*:\/\/)([^:@/]*):(.*)@(?=[^@]*$)/i,
          (_m, scheme: string, user: string) => `${scheme}${user}:***@`,
        ),
      )
      .join(';')
  );
}

/** A URL keeps all but its password; any other secret (a bare password) is hidden whole. */
export function redactSecret(value: string): string {
  if (value === '') return '';
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? redactUrl(value) : '***';
}

/** The resolved configuration as a log-safe object: secrets are redacted. */
export function describeConfig<S extends Settings>(settings: S, values: ValuesOf<S>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, s] of Object.entries(settings)) {
    const v = (values as Record<string, unknown>)[key];
    out[key] = s.secret && typeof v === 'string' ? redactSecret(v) : v;
  }
  return out;
}

/** The configuration table of docs/configuration.md (build/docs.ts), generated from the declarations so it cannot drift. */
export function settingsTable(settings: Settings): string {
  const rows = Object.entries(settings).map(([, s]) => {
    const flag = s.flag ? `\`--${s.flag.long}\`${s.flag.short ? ` / \`-${s.flag.short}\`` : ''}` : '';
    const env = s.env.map((e) => `\`${e}\``).join(', ');
    const def =
      s.shownDefault ??
      (s.default === null
        ? 'none'
        : `\`${Array.isArray(s.default) ? s.default.join(',') : JSON.stringify(s.default)}\``);
    return `| ${env} | ${flag} | ${def} | ${s.doc} |`;
  });
  return ['| environment | flag | default | meaning |', '|---|---|---|---|', ...rows].join('\n');
}
