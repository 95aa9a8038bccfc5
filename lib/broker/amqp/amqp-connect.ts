/**
 * Opening an AMQP connection to one of several brokers: Celery's failover list (`amqp://a;amqp://b`), TLS as
 * `broker_use_ssl` asks, and a bound on how long one attempt may take, so that a node that accepts TCP but
 * never answers does not hold the worker away from the others, and when to try again (`Reconnects`). The broker
 * and Beat's lock both connect here.
 */
import type { ChannelModel } from 'amqplib';
import type { ConnectionOptions } from 'node:tls';
import { redactUrl } from '../../config/settings.js';
import { DEFAULT_TLS, type TlsSettings, describeTlsFailure, tlsConnectOptions } from '../../config/tls.js';
import { BrokerError, coerceError } from '../../errors.js';
import { splitBrokerUrls } from '../schemes.js';
import amqp from './amqplib.js';

export interface AmqpEndpointOptions {
  heartbeatSeconds: number;
  connectionName: string;
  tls?: TlsSettings | undefined;
  /** One attempt's budget: TCP, TLS and the AMQP handshake. */
  connectTimeoutMs?: number | undefined;
}

/** Adds `heartbeat=N` to the URL unless the operator set one (amqplib reads it from the query). */
export function withHeartbeat(url: string, seconds: number): string {
  if (/[?&]heartbeat=/.test(url)) return url;
  return `${url}${url.includes('?') ? '&' : '?'}heartbeat=${seconds}`;
}

/** `broker_use_ssl` turns amqp:// into amqps://, as kombu's `ssl=True` does (amqplib picks TLS by scheme). */
export function effectiveUrl(url: string, tls: TlsSettings = DEFAULT_TLS): string {
  return tls.enabled ? url.replace(/^\s*amqp:\/\//i, 'amqps://') : url.trim();
}

function socketOptions(url: string, o: AmqpEndpointOptions): Record<string, unknown> {
  const tls: ConnectionOptions = /^amqps:/i.test(url) ? tlsConnectOptions(o.tls ?? DEFAULT_TLS) : {};
  return {
    ...tls,
    clientProperties: { connection_name: o.connectionName },
    // Without it, Nagle's algorithm meets the broker's delayed ACK and every confirmed publish waits ~40 ms.
    noDelay: true,
    ...(o.connectTimeoutMs ? { timeout: o.connectTimeoutMs } : {}),
  };
}

/** Connects to one URL; a failure names the broker (password hidden) and, for TLS, what to fix. */
export async function connectTo(rawUrl: string, o: AmqpEndpointOptions): Promise<ChannelModel> {
  const url = effectiveUrl(rawUrl, o.tls);
  try {
    return await amqp.connect(withHeartbeat(url, o.heartbeatSeconds), socketOptions(url, o));
  } catch (err) {
    // Node's socket errors may come from another realm (a test runner's): read the message, not the class.
    const message = (err as { message?: unknown } | null)?.message;
    const why =
      describeTlsFailure(err, 'CELERY_BROKER_USE_SSL') ??
      (typeof message === 'string' ? message : coerceError(err).message);
    throw new BrokerError(`cannot connect to ${redactUrl(url)}: ${why}`, { cause: err });
  }
}

/**
 * Kombu's round-robin failover over the URLs of a `;`-separated broker URL: `next()` is where to try now,
 * `failed()` moves on, and `roundDone` says whether every URL failed since the last success (only then
 * does the caller back off, as kombu sleeps only after a full cycle).
 */
export class FailoverList {
  readonly urls: readonly string[];
  private index = 0;
  private failures = 0;

  constructor(url: string) {
    const urls = splitBrokerUrls(url);
    if (urls.length === 0) throw new BrokerError('no broker URL given');
    this.urls = urls;
  }

  get current(): string {
    return this.urls[this.index] ?? this.urls[0] ?? '';
  }

  /** The URL tried next has failed, or its connection was lost: move to the next one. */
  failed(): void {
    this.failures++;
    this.index = (this.index + 1) % this.urls.length;
  }

  /** Whether the last failure completed a cycle over every URL. */
  get roundDone(): boolean {
    return this.failures > 0 && this.failures % this.urls.length === 0;
  }

  succeeded(): void {
    this.failures = 0;
  }
}

/**
 * Where and when the next connection attempt goes: the next URL of the failover list, at once until every URL has
 * failed once in a row (kombu backs off only after a full cycle), then after a doubling wait with jitter.
 */
export class Reconnects {
  private readonly failover: FailoverList;
  private attempt = 0;

  constructor(
    url: string,
    private readonly initialMs: number,
    private readonly maxMs: number,
  ) {
    this.failover = new FailoverList(url);
  }

  /** The URL to try now. */
  get url(): string {
    return this.failover.current;
  }

  /** The attempt failed or its connection was lost: moves to the next URL; returns how long to wait before it. */
  failed(): number {
    this.failover.failed();
    if (!this.failover.roundDone) return 0;
    const base = Math.min(this.maxMs, this.initialMs * 2 ** this.attempt++);
    return Math.round(base * (0.8 + Math.random() * 0.4));
  }

  succeeded(): void {
    this.attempt = 0;
    this.failover.succeeded();
  }

  /** `retrying in N ms`, naming the URL when there are several. */
  describe(delay: number): string {
    const url = this.failover.urls.length > 1 ? ` with ${redactUrl(this.failover.current)}` : '';
    return `retrying${url} in ${delay} ms`;
  }
}
