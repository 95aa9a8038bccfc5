/**
 * Broker URLs as kombu reads them, turned into ioredis options: `redis://[:password@]host[:port][/db]`,
 * `rediss://` (TLS), and `sentinel://[:password@]host:port[/db]` with several sentinels joined by `;`
 * and the master named by kombu's `master_name` transport option.
 */
import type { RedisOptions } from 'ioredis';
import { DEFAULT_TLS, type TlsSettings, tlsConnectOptions } from '../../config/tls.js';
import { ConfigError } from '../../errors.js';

export interface RedisTarget {
  options: RedisOptions;
  db: number;
}

function dbOf(u: URL): number {
  const path = u.pathname.replace(/^\//, '');
  if (path === '') return 0;
  const db = Number(path);
  if (!Number.isInteger(db) || db < 0) throw new ConfigError([`broker URL: database must be a number, got "${path}"`]);
  return db;
}

/** `tls` is Celery's `broker_use_ssl` (CA, client certificate, cert_reqs): for rediss://, or redis:// when it asks for TLS. */
export function redisTarget(url: string, masterName?: string, tls: TlsSettings = DEFAULT_TLS): RedisTarget {
  const parts = url
    .split(';')
    .map((p) => p.trim())
    .filter(Boolean);
  const urls = parts.map((p) => {
    try {
      return new URL(p);
    } catch {
      throw new ConfigError(['broker URL: not a URL (expected redis://, rediss:// or sentinel://)']);
    }
  });
  const first = urls[0];
  if (!first) throw new ConfigError(['broker URL is empty']);
  const password = first.password ? decodeURIComponent(first.password) : undefined;
  const username = first.username ? decodeURIComponent(first.username) : undefined;
  const db = dbOf(first);
  const common: RedisOptions = {
    db,
    maxRetriesPerRequest: null,
    enableReadyCheck: true,
    ...(password ? { password } : {}),
    ...(username ? { username } : {}),
  };
  if (first.protocol === 'sentinel:') {
    if (!masterName) {
      throw new ConfigError(['a sentinel:// broker URL needs the master name (broker transport option master_name)']);
    }
    return {
      db,
      options: {
        ...common,
        name: masterName,
        sentinels: urls.map((u) => ({ host: u.hostname, port: Number(u.port || 26379) })),
        ...(password ? { sentinelPassword: password } : {}),
      },
    };
  }
  if (first.protocol !== 'redis:' && first.protocol !== 'rediss:') {
    throw new ConfigError([`broker URL: unsupported scheme ${first.protocol}`]);
  }
  return {
    db,
    options: {
      ...common,
      host: first.hostname || '127.0.0.1',
      port: Number(first.port || 6379),
      ...(first.protocol === 'rediss:' || tls.enabled ? { tls: tlsConnectOptions(tls) } : {}),
    },
  };
}
