/**
 * DnsZones on Route 53 (`@aws-sdk/client-route-53`). Throttling (`Throttling`, `PriorRequestNotComplete`) and
 * 5xx are retried by the SDK's standard retry mode (AWS_MAX_ATTEMPTS, default 3) before anything reaches us.
 * Idempotent: UPSERT replaces, deleting what is gone is `false`, a zone is looked up before it is created.
 */
import { randomUUID } from 'node:crypto';
import {
  ChangeResourceRecordSetsCommand,
  CreateHostedZoneCommand,
  GetHostedZoneCommand,
  ListHostedZonesByNameCommand,
  ListResourceRecordSetsCommand,
  type ResourceRecordSet,
  type Route53Client,
} from '@aws-sdk/client-route-53';
import { AwsAdapter } from './aws-adapter.js';
import { checkDnsName } from './call.js';
import type { DnsRecord, DnsZones, HostedZone, RecordType } from './route53-port.js';

/** Route 53 writes names with a trailing dot and escapes some characters as `\ooo` (`*` is `\052`). */
export function fromRoute53Name(name: string): string {
  return name
    .replace(/\\(\d{3})/g, (_m, o: string) => String.fromCharCode(parseInt(o, 8)))
    .replace(/\.$/, '')
    .toLowerCase();
}

const fqdn = (name: string) => `${name.replace(/\.$/, '').toLowerCase()}.`;
const zoneIdOf = (id: string) => id.replace(/^\/hostedzone\//, '');

/**
 * TXT strings are quoted on the wire (`"v=spf1 -all"`), with `"` and `\` escaped; a value that comes quoted is
 * sent as it is, as Smarter's `to_record_set` does, so that `"v=DMARC1; p=none"` is one string, not one with quotes.
 */
const quoteTxt = (v: string) => (/^"[\s\S]*"$/.test(v) ? v : `"${v.replace(/(["\\])/g, '\\$1')}"`);
function unquoteTxt(v: string): string {
  const strings = [...v.matchAll(/"((?:[^"\\]|\\.)*)"/g)];
  return strings.length === 0 ? v : strings.map((m) => (m[1] ?? '').replace(/\\(.)/g, '$1')).join('');
}

export class Route53Zones extends AwsAdapter<Route53Client> implements DnsZones {
  protected readonly service = 'route53';

  async findZone(domain: string): Promise<HostedZone | null> {
    const name = fqdn(domain);
    const found = await this.call('ListHostedZonesByName', domain, async () => {
      checkDnsName('route53', 'ListHostedZonesByName', domain);
      const out = await this.client.send(new ListHostedZonesByNameCommand({ DNSName: name, MaxItems: 10 }));
      // The list starts at `name` and goes on alphabetically: only an exact, public match is this zone.
      return (out.HostedZones ?? []).find((z) => z.Name?.toLowerCase() === name && !z.Config?.PrivateZone);
    });
    return found?.Id ? this.getZone(zoneIdOf(found.Id)) : null;
  }

  async getZone(id: string): Promise<HostedZone | null> {
    return this.call('GetHostedZone', id, async () => {
      try {
        const out = await this.client.send(new GetHostedZoneCommand({ Id: zoneIdOf(id) }));
        if (!out.HostedZone?.Id || !out.HostedZone.Name) return null;
        return {
          id: zoneIdOf(out.HostedZone.Id),
          name: fromRoute53Name(out.HostedZone.Name),
          nameServers: out.DelegationSet?.NameServers ?? [],
        };
      } catch (err) {
        if ((err as { name?: string }).name === 'NoSuchHostedZone') return null;
        throw err;
      }
    });
  }

  async getOrCreateZone(domain: string): Promise<HostedZone> {
    const existing = await this.findZone(domain);
    if (existing) return existing;
    return this.call('CreateHostedZone', domain, async () => {
      // One reference per creation: the SDK's own retries resend it, so a retried request creates one zone.
      const out = await this.client.send(
        new CreateHostedZoneCommand({ Name: fqdn(domain), CallerReference: `smarter-worker-${randomUUID()}` }),
      );
      if (!out.HostedZone?.Id || !out.HostedZone.Name) throw new Error('CreateHostedZone answered without a zone');
      return {
        id: zoneIdOf(out.HostedZone.Id),
        name: fromRoute53Name(out.HostedZone.Name),
        nameServers: out.DelegationSet?.NameServers ?? [],
      };
    });
  }

  async getRecord(zoneId: string, name: string, type: RecordType): Promise<DnsRecord | null> {
    const set = await this.call('ListResourceRecordSets', `${zoneIdOf(zoneId)}/${name} ${type}`, () =>
      this.findSet(zoneId, name, type),
    );
    return set ? toRecord(set) : null;
  }

  async upsertRecord(zoneId: string, record: DnsRecord): Promise<void> {
    await this.call(
      'ChangeResourceRecordSets UPSERT',
      `${zoneIdOf(zoneId)}/${record.name} ${record.type}`,
      async () => {
        checkDnsName('route53', 'ChangeResourceRecordSets UPSERT', record.name);
        await this.client.send(
          new ChangeResourceRecordSetsCommand({
            HostedZoneId: zoneIdOf(zoneId),
            ChangeBatch: {
              Comment: 'smarter-worker',
              Changes: [{ Action: 'UPSERT', ResourceRecordSet: toSet(record) }],
            },
          }),
        );
      },
    );
  }

  async deleteRecord(zoneId: string, name: string, type: RecordType): Promise<boolean> {
    return this.call('ChangeResourceRecordSets DELETE', `${zoneIdOf(zoneId)}/${name} ${type}`, async () => {
      // DELETE must name the record set exactly as it is (TTL and values): read it first.
      const set = await this.findSet(zoneId, name, type);
      if (!set) return false;
      try {
        await this.client.send(
          new ChangeResourceRecordSetsCommand({
            HostedZoneId: zoneIdOf(zoneId),
            ChangeBatch: { Comment: 'smarter-worker', Changes: [{ Action: 'DELETE', ResourceRecordSet: set }] },
          }),
        );
        return true;
      } catch (err) {
        // Gone between our read and our delete (another run of the same task): that is what we wanted.
        if ((err as { name?: string }).name === 'InvalidChangeBatch' && /not found/i.test((err as Error).message)) {
          return false;
        }
        throw err;
      }
    });
  }

  private async findSet(zoneId: string, name: string, type: RecordType): Promise<ResourceRecordSet | undefined> {
    const out = await this.client.send(
      new ListResourceRecordSetsCommand({
        HostedZoneId: zoneIdOf(zoneId),
        StartRecordName: fqdn(name),
        StartRecordType: type,
        MaxItems: 1,
      }),
    );
    const set = out.ResourceRecordSets?.[0];
    return set && set.Name && fromRoute53Name(set.Name) === fromRoute53Name(name) && set.Type === type
      ? set
      : undefined;
  }
}

function toRecord(set: ResourceRecordSet): DnsRecord {
  const type = set.Type as RecordType;
  const values = (set.ResourceRecords ?? [])
    .map((r) => r.Value ?? '')
    .map((v) => (type === 'TXT' ? unquoteTxt(v) : type === 'CNAME' || type === 'NS' ? v.replace(/\.$/, '') : v));
  return {
    name: fromRoute53Name(set.Name ?? ''),
    type,
    ttl: set.TTL ?? 0,
    values,
    ...(set.AliasTarget?.DNSName && set.AliasTarget.HostedZoneId
      ? {
          alias: {
            zoneId: set.AliasTarget.HostedZoneId,
            dnsName: set.AliasTarget.DNSName.replace(/\.$/, ''),
            evaluateTargetHealth: set.AliasTarget.EvaluateTargetHealth ?? false,
          },
        }
      : {}),
  };
}

function toSet(record: DnsRecord): ResourceRecordSet {
  if (record.alias) {
    return {
      Name: fqdn(record.name),
      Type: record.type,
      AliasTarget: {
        HostedZoneId: record.alias.zoneId,
        DNSName: record.alias.dnsName,
        EvaluateTargetHealth: record.alias.evaluateTargetHealth,
      },
    };
  }
  return {
    Name: fqdn(record.name),
    Type: record.type,
    TTL: record.ttl,
    ResourceRecords: record.values.map((v) => ({ Value: record.type === 'TXT' ? quoteTxt(v) : v })),
  };
}
