/** Public DNS through node:dns: whether a domain's records are visible to the world yet. */

/** The record types public DNS is asked for through node:dns. */
export const LOOKUP_TYPES = ['A', 'AAAA', 'CAA', 'CNAME', 'MX', 'NAPTR', 'NS', 'PTR', 'SOA', 'SRV', 'TXT'] as const;
export type LookupType = (typeof LOOKUP_TYPES)[number];

/** A lookup's answer; a timeout or a server failure is thrown as a CloudError ('Unavailable'), never an answer. */
export type LookupResult = { status: 'found'; values: string[] } | { status: 'nxdomain' } | { status: 'nodata' };

/** Public DNS, as the world sees it (not Route 53's API). */
export interface Resolver {
  lookup(name: string, type: LookupType): Promise<LookupResult>;
}
