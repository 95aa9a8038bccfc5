/**
 * The configuration as `celery inspect conf` shows it (Celery's `app.conf.table()` through
 * `filter_hidden_settings`): lowercase setting names, Celery's where the setting is Celery's
 * (`CELERY_WORKER_CONCURRENCY` is `worker_concurrency`), the environment name lowercased otherwise; only what
 * differs from the default unless `withDefaults`; and Celery's censoring: a key naming a secret (API, TOKEN,
 * KEY, SECRET, PASS, SIGNATURE, DATABASE) shows `********`, a broker or backend URL keeps all but its password.
 */
import type { Setting, Settings, ValuesOf } from './settings.js';

/** Celery's mask (`filter_hidden_settings`). */
export const CELERY_MASK = '********';
/** Celery's `HIDDEN_SETTINGS`. */
const HIDDEN = /API|TOKEN|KEY|SECRET|PASS|PROFANITIES_LIST|SIGNATURE|DATABASE/i;

/** The name `celery inspect conf` shows for a setting. */
export function celeryName(key: string, s: Setting<unknown>): string {
  const env = s.env[0] ?? key;
  return (env.startsWith('CELERY_') ? env.slice('CELERY_'.length) : env).toLowerCase();
}

const snake = (k: string) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** A value as Python shows it: objects with snake_case keys (our parsed `broker_transport_options`, TLS). */
function pythonValue(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(pythonValue);
  if (typeof v === 'object' && v !== null && Object.getPrototypeOf(v) === Object.prototype) {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [snake(k), pythonValue(x)]));
  }
  return v;
}

/** kombu `Connection.as_uri(mask=...)` for each URL of a failover list: the password replaced by the mask. */
export function maskUrlPassword(url: string, mask = CELERY_MASK): string {
  return url
    .split(';')
    .map((one) =>
      one.replace(
        /^(\s*[a-z][a-z0-9+.-]*:\/\/)([^:@/]*):(.*)@(?=[^@]*$)/i,
        (_m, scheme: string, user: string) => `${scheme}${user}:${mask}@`,
      ),
    )
    .join(';');
}

/** Celery's `maybe_censor`, recursing into mappings. */
function censor(key: string, value: unknown): unknown {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, censor(k, v)]));
  }
  if (HIDDEN.test(key)) return CELERY_MASK;
  if (
    typeof value === 'string' &&
    (key.toLowerCase().includes('broker_url') || key.toLowerCase().includes('backend'))
  ) {
    return maskUrlPassword(value);
  }
  return value;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

export function celeryConf<S extends Settings>(
  settings: S,
  values: ValuesOf<S>,
  withDefaults: boolean,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, s] of Object.entries(settings)) {
    const v = (values as Record<string, unknown>)[key];
    if (!withDefaults && same(v, s.default)) continue;
    const name = celeryName(key, s);
    // A setting declared secret is hidden whole, whatever its name says (a URL keeps all but its password).
    const shown =
      s.secret && typeof v === 'string' && v !== ''
        ? /^[a-z][a-z0-9+.-]*:\/\//i.test(v)
          ? maskUrlPassword(v)
          : CELERY_MASK
        : pythonValue(v);
    out[name] = censor(name, shown);
  }
  return out;
}
