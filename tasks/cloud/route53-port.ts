/**
 * Route 53: the hosted zones and record sets of the API domain and of customers' custom domains. Creating what
 * exists, or deleting what is gone, is success: a task that re-runs after a crash must not fail on its own work.
 */

/** Every record type Route 53 accepts (its `RRType`). */
export const RECORD_TYPES = [
  'A',
  'AAAA',
  'CAA',
  'CNAME',
  'DS',
  'HTTPS',
  'MX',
  'NAPTR',
  'NS',
  'PTR',
  'SOA',
  'SPF',
  'SRV',
  'SSHFP',
  'SVCB',
  'TLSA',
  'TXT',
] as const;
export type RecordType = (typeof RECORD_TYPES)[number];

export interface DnsRecord {
  /** Fully qualified, without the trailing dot (`api.example.com`). */
  name: string;
  type: RecordType;
  ttl: number;
  /** TXT values unquoted (the adapter adds and removes Route 53's quotes); empty for an alias. */
  values: string[];
  /** A Route 53 alias (an A record pointing at a load balancer, as an API domain's usually is) instead of values. */
  alias?: { zoneId: string; dnsName: string; evaluateTargetHealth: boolean };
}

export interface HostedZone {
  /** Route 53's id without the `/hostedzone/` prefix. */
  id: string;
  /** Without the trailing dot. */
  name: string;
  nameServers: string[];
}

/** Route 53. */
export interface DnsZones {
  /** The public zone named exactly `domain`, or null. */
  findZone(domain: string): Promise<HostedZone | null>;
  getZone(id: string): Promise<HostedZone | null>;
  getOrCreateZone(domain: string): Promise<HostedZone>;
  getRecord(zoneId: string, name: string, type: RecordType): Promise<DnsRecord | null>;
  /** UPSERT: creates or replaces the record set. */
  upsertRecord(zoneId: string, record: DnsRecord): Promise<void>;
  /** True when it deleted a record, false when there was none (both are success). */
  deleteRecord(zoneId: string, name: string, type: RecordType): Promise<boolean>;
}
