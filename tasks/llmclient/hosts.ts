/** An LLMClient's host names, as Smarter's `LLMClient.default_host` and `custom_host` build them. */
import { SmarterValueError } from '../errors.js';
import type { LlmclientRow } from './rows.js';
import { DOMAIN } from './rows.js';
import { isDomainName } from './settings.js';

/**
 * `rfc1034_compliant_str`: lower case, letters, digits and single inner hyphens, at most 63 characters.
 * Smarter appends the owner's user name for an LLMClient its account's admin does not own; we use the name
 * alone, which is the admin's case (see the README).
 */
export function rfc1034Name(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63)
    .replace(/-+$/g, '');
}

/** A domain as the tasks use it: lower case, no trailing dot, validated; `what` names the task and argument. */
export function domainName(input: string, what: string): string {
  const v = input.trim().toLowerCase().replace(/\.$/, '');
  if (!isDomainName(v)) throw new SmarterValueError(`${what}: ${JSON.stringify(input)} is not a valid domain name`);
  return v;
}

/** `<name>.<account number>.<API domain>`, e.g. `example.3141-5926-5359.alpha.api.example.com`. */
export function defaultHost(l: LlmclientRow, apiDomain: string): string {
  return domainName(`${rfc1034Name(l.name)}.${l.accountNumber}.${apiDomain}`, `LLMClient ${l.id} default host`);
}

/** `<name>.<custom domain>`, once the custom domain is verified; else null. */
export function customHost(l: LlmclientRow): string | null {
  const d = l.customDomain;
  if (!d || d.status !== DOMAIN.VERIFIED) return null;
  return domainName(`${rfc1034Name(l.name)}.${d.domainName}`, `LLMClient ${l.id} custom host`);
}
