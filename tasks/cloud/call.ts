/**
 * The one way an adapter calls its client: logged at debug with service, verb and resource (never a value,
 * so never a secret), and every failure turned into a CloudError by the adapter's own classifier.
 */
import type { Logger } from '../../lib/logger.js';
import { CloudError, type CloudService } from './errors.js';

export type Classify = (err: unknown) => CloudError;

export async function cloudCall<T>(
  logger: Logger,
  service: CloudService,
  verb: string,
  resource: string,
  classify: Classify,
  run: () => Promise<T>,
): Promise<T> {
  const started = performance.now();
  logger.debug('cloud call', { service, verb, resource });
  try {
    const result = await run();
    logger.debug('cloud call done', { service, verb, resource, ms: Math.round(performance.now() - started) });
    return result;
  } catch (err) {
    const failure = err instanceof CloudError ? err : classify(err);
    logger.debug('cloud call failed', {
      service,
      verb,
      resource,
      kind: failure.kind,
      ms: Math.round(performance.now() - started),
    });
    throw failure;
  }
}

/** The message of whatever a client threw, for a CloudError's detail. */
export function messageOf(err: unknown): string {
  if (err instanceof Error) return err.message;
  return typeof err === 'string' ? err : JSON.stringify(err);
}

const NETWORK_CODES =
  /\b(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|ESOCKET|ECONNECTION|UND_ERR_\w+)\b/;

/**
 * A network failure before any answer (refused, reset, timed out, name not resolved): the service is
 * unavailable. The message is read too: a client may re-wrap a socket error it does not recognise as an Error
 * (the AWS SDK does when the error comes from another realm) and keep only its text.
 */
export function isNetworkError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  const name = (err as { name?: unknown } | null)?.name;
  return (
    (typeof code === 'string' && NETWORK_CODES.test(code)) ||
    name === 'TimeoutError' ||
    name === 'AbortError' ||
    name === 'FetchError' ||
    NETWORK_CODES.test(messageOf(err)) ||
    /socket hang up/.test(messageOf(err))
  );
}

const LABEL = /^(?!-)[a-z0-9_-]{1,63}(?<!-)$/i;

/**
 * A DNS name as Route 53 and ACM take it (letters, digits, `-`, `_`; a leading `*` label; at most 253
 * characters), checked before the call: some endpoints (moto among them) accept anything, and a task given
 * a malformed domain must fail naming it rather than create something no resolver will ever find.
 */
export function checkDnsName(service: CloudService, verb: string, name: string): void {
  const bare = name.replace(/\.$/, '');
  const labels = bare.split('.');
  const ok =
    bare.length > 0 &&
    bare.length <= 253 &&
    labels.length >= 2 &&
    labels.every((l, i) => LABEL.test(l) || (i === 0 && l === '*'));
  if (!ok) {
    throw new CloudError(
      service,
      verb,
      name,
      'Invalid',
      `${JSON.stringify(name)} is not a DNS name (dot-separated labels of letters, digits, - and _)`,
    );
  }
}
