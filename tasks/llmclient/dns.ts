/**
 * The DNS operations several tasks share, on the Route 53 and resolver ports: Smarter's
 * `create_domain_a_record` (point a host at the API domain's load balancer by copying its A record),
 * `check_domain` (the record exists and resolves) and the NS delegation check of a custom domain.
 */
import { CloudError } from '../cloud/errors.js';
import type { CloudDeps } from '../cloud/cloud-deps.js';
import type { DnsRecord, HostedZone, RecordType } from '../cloud/route53-port.js';
import { LOOKUP_TYPES, type LookupType } from '../cloud/resolver-port.js';

const bare = (n: string) => n.trim().toLowerCase().replace(/\.$/, '');

/** The hosted zone named exactly `domain`, or a NotFound that says which zone and why it was wanted. */
export async function zoneOf(cloud: CloudDeps, domain: string, why: string): Promise<HostedZone> {
  const zone = await cloud.route53.findZone(domain);
  if (!zone) {
    throw new CloudError('route53', 'find hosted zone', domain, 'NotFound', `no hosted zone named ${domain} (${why})`);
  }
  return zone;
}

/**
 * Copies the A record of `apiDomain` (in its own zone) to `hostname`, in `zoneId` or else the API domain's zone.
 * Returns whether it wrote the record (false: it already pointed there). An API domain without a zone or an A
 * record fails, as Smarter's DNS service's `create_domain_a_record` does (`DNSZoneNotFound`), naming what is missing.
 */
export async function copyApiARecord(
  cloud: CloudDeps,
  o: { hostname: string; apiDomain: string; ttl: number; zoneId?: string },
): Promise<{ zoneId: string; created: boolean }> {
  const apiZone = await zoneOf(cloud, o.apiDomain, `to copy its A record to ${o.hostname}`);
  const source = await cloud.route53.getRecord(apiZone.id, o.apiDomain, 'A');
  if (!source || (source.values.length === 0 && !source.alias)) {
    throw new CloudError(
      'route53',
      'get A record',
      o.apiDomain,
      'NotFound',
      `${o.apiDomain} has no A record to copy to ${o.hostname}`,
    );
  }
  const zoneId = o.zoneId ?? apiZone.id;
  const existing = await cloud.route53.getRecord(zoneId, o.hostname, 'A');
  if (existing && sameTarget(existing, source)) return { zoneId, created: false };
  // An API domain's A record is usually an alias of its load balancer; Smarter copies the alias as it is.
  const record: DnsRecord = source.alias
    ? { name: o.hostname, type: 'A', ttl: o.ttl, values: [], alias: source.alias }
    : { name: o.hostname, type: 'A', ttl: o.ttl, values: source.values };
  await cloud.route53.upsertRecord(zoneId, record);
  await cloud.ledger?.recordCreated(zoneId, o.hostname, 'A');
  return { zoneId, created: true };
}

/** Smarter's `DNSRecord.same_target`: the same alias, or the same set of values. */
export function sameTarget(a: DnsRecord, b: DnsRecord): boolean {
  if (a.alias || b.alias) return JSON.stringify(a.alias ?? null) === JSON.stringify(b.alias ?? null);
  const x = new Set(a.values.map(bare));
  const y = new Set(b.values.map(bare));
  return x.size === y.size && [...x].every((v) => y.has(v));
}

export type DomainCheck = 'verified' | 'missing' | 'pending';

/**
 * Smarter's `check_domain`: MISSING when the record is not in its zone (checking again cannot help), PENDING
 * while it exists but does not resolve yet (NXDOMAIN, no answer or a timeout), VERIFIED once it resolves. The
 * name is asked for the record's own type; a type node:dns cannot ask for (DS, HTTPS, SPF, SSHFP, SVCB, TLSA)
 * is checked with an A lookup, as Smarter's `dns.resolver.query(name)` does for every type.
 */
export async function checkDomain(
  cloud: CloudDeps,
  o: { name: string; type: RecordType; apiDomain: string; zoneId?: string | null },
): Promise<DomainCheck> {
  const zoneId = o.zoneId || (await cloud.route53.findZone(o.apiDomain))?.id;
  if (!zoneId) return 'missing';
  if (!(await cloud.route53.getRecord(zoneId, o.name, o.type))) return 'missing';
  const asked: LookupType = (LOOKUP_TYPES as readonly string[]).includes(o.type) ? (o.type as LookupType) : 'A';
  try {
    const r = await cloud.resolver.lookup(o.name, asked);
    return r.status === 'found' ? 'verified' : 'pending';
  } catch (err) {
    if (err instanceof CloudError && err.kind === 'Unavailable') return 'pending';
    throw err;
  }
}

/** The domain's public NS records include one of its hosted zone's name servers (Smarter's `_ns_records_verified`). */
export async function nsDelegated(cloud: CloudDeps, zone: HostedZone, domain: string): Promise<boolean> {
  try {
    const r = await cloud.resolver.lookup(domain, 'NS');
    if (r.status !== 'found') return false;
    const published = new Set(r.values.map(bare));
    return zone.nameServers.some((ns) => published.has(bare(ns)));
  } catch (err) {
    // Smarter treats any resolver failure as "not delegated yet" and checks again.
    if (err instanceof CloudError) return false;
    throw err;
  }
}
