/** An LLMClient's host names, as Smarter's `LLMClient.default_host` and `custom_host` build them. */
import { SmarterValueError } from '../errors.js';
import type { LlmclientRow } from './rows.js';
import { DOMAIN } from './rows.js';
import { isDomainName } from '../env/settings.js';

const MAX_LABEL = 63;

/**
 * Smarter's `rfc1034_compliant_str` (`smarter/common/utils/rfc1034_compliance.py`): lower case, `_` becomes `-`,
 * every other character outside `a-z 0-9 -` is deleted (spaces and dots included, and runs of `-` are kept),
 * leading and trailing `-` are stripped, then the first 63 characters are kept. Nothing left is a
 * SmarterValueError, as in Smarter.
 */
export function rfc1034CompliantStr(value: string): string {
  const label = value
    .toLowerCase()
    .replace(/_/g, '-')
    .replace(/[^a-z0-9-]/g, '')
    .replace(/^-+|-+$/g, '');
  if (label === '') throw new SmarterValueError('Could not generate RFC 1034 compliant name from empty string');
  return label.slice(0, MAX_LABEL);
}

/**
 * `LLMClient.rfc1034_compliant_name`: the LLMClient's name when its owner is its account's admin user, else
 * `<name>-<owner's username>`, so that members' LLMClients of the same name get different hosts.
 */
export function llmclientLabel(l: Pick<LlmclientRow, 'name' | 'ownerUsername' | 'ownerIsAdmin'>): string {
  return rfc1034CompliantStr(l.ownerIsAdmin ? l.name : `${l.name}-${l.ownerUsername}`);
}

/** `smarter_settings.local_hosts`: names the DNS service refuses to work with. */
const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', 'localhost:9357', '127.0.0.1:9357', 'testserver']);

function refuseLocalHost(name: string, what: string): void {
  if (LOCAL_HOSTS.has(name)) throw new SmarterValueError(`${what}: Domain ${name} is prohibited.`);
}

/** A domain as the tasks use it: lower case, no trailing dot, validated; `what` names the task and argument. */
export function domainName(input: string, what: string): string {
  const v = input.trim().toLowerCase().replace(/\.$/, '');
  refuseLocalHost(v, what);
  if (!isDomainName(v)) throw new SmarterValueError(`${what}: ${JSON.stringify(input)} is not a valid domain name`);
  return v;
}

/**
 * A record's name as Smarter's `DNSService.resolve_record_name` takes it: lower case, no trailing dot, and not a
 * local host; not checked as a host name, since records have labels hosts may not (`_acme-challenge`). Route 53
 * refuses what it cannot hold.
 */
export function recordName(input: string, what: string): string {
  const v = input.trim().toLowerCase().replace(/\.$/, '');
  refuseLocalHost(v, what);
  return v;
}

/** `<label>.<account number>.<LLMClient API domain>`, e.g. `example.3141-5926-5359.alpha.api.platform.example.com`. */
export function defaultHost(l: LlmclientRow, llmclientApiDomain: string): string {
  return domainName(`${llmclientLabel(l)}.${l.accountNumber}.${llmclientApiDomain}`, `LLMClient ${l.id} default host`);
}

/** `<label>.<custom domain>`, once the custom domain is verified; else null. */
export function customHost(l: LlmclientRow): string | null {
  const d = l.customDomain;
  if (!d || d.status !== DOMAIN.VERIFIED) return null;
  return domainName(`${llmclientLabel(l)}.${d.domainName}`, `LLMClient ${l.id} custom host`);
}

/** Python's `urlparse(url).netloc`: the part after `//` up to the path, query or fragment; '' when there is no `//`. */
export function netlocOf(url: string): string {
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:/.exec(url);
  const rest = scheme ? url.slice(scheme[0].length) : url;
  if (!rest.startsWith('//')) return '';
  const tail = rest.slice(2);
  const end = tail.search(/[/?#]/);
  return end === -1 ? tail : tail.slice(0, end);
}

/** `SmarterValidator.VALID_ACCOUNT_NUMBER_PATTERN`. */
const ACCOUNT_NUMBER = /^\d{4}-\d{4}-\d{4}$/;

/** The account number of a default host, `<label>.<account number>.<API domain>` (`_account_number_from_hostname`). */
export function accountNumberOfHost(host: string): string | null {
  const labels = host.split('.');
  const second = labels[1];
  return labels.length >= 3 && second !== undefined && ACCOUNT_NUMBER.test(second) ? second : null;
}
