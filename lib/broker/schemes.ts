/**
 * Which broker URL schemes this build implements, as data: the configuration refuses any other at start
 * (with this list in its message), and `create-broker.ts` picks the implementation by the same scheme.
 * A new transport adds its schemes here and its case in `create-broker.ts`.
 */
export type BrokerKind = 'amqp' | 'redis';

export const BROKER_SCHEMES: Readonly<Record<string, BrokerKind>> = Object.freeze({
  amqp: 'amqp',
  amqps: 'amqp',
  redis: 'redis',
  rediss: 'redis',
  sentinel: 'redis',
});

/** The scheme of a URL, lower-cased, without `://`; '' when there is none. */
export function schemeOf(url: string): string {
  return /^([a-z][a-z0-9+.-]*):\/\//i.exec(url.trim())?.[1]?.toLowerCase() ?? '';
}

/** The implementation a URL asks for; undefined when this build has none for its scheme. */
export function brokerKindOf(url: string): BrokerKind | undefined {
  const scheme = schemeOf(url);
  return Object.hasOwn(BROKER_SCHEMES, scheme) ? BROKER_SCHEMES[scheme] : undefined;
}

/** `amqp:// or amqps://`, for messages. */
export function knownSchemes(): string {
  const all = Object.keys(BROKER_SCHEMES).map((s) => `${s}://`);
  return all.length <= 1 ? (all[0] ?? '') : `${all.slice(0, -1).join(', ')} or ${all[all.length - 1] ?? ''}`;
}

/**
 * Celery's failover list: `broker_url` may name several brokers joined by `;` (kombu's `alternates`), tried
 * in order. Blank items are dropped, as kombu drops them; the Redis broker splits sentinel lists the same way.
 */
export function splitBrokerUrls(url: string): string[] {
  return url
    .split(';')
    .map((u) => u.trim())
    .filter((u) => u.length > 0);
}
