/**
 * The ledger of cloud resources (`infrastructure_infrastructureresource`), written at the moments Smarter's
 * infrastructure services send their resource signals and its receivers (`infrastructure/receivers.py`) record
 * them: the DNS service's zones and records (`services/dns.py`), the certificate service's certificates
 * (`services/certificates.py`), and what the inventory discovers. A ledger that cannot be written is logged and
 * never fails the operation that changed the cloud, as in Smarter.
 *
 * The tasks reach it as `ctx.deps.cloud.ledger` (absent where nothing wires one, e.g. tests of other things).
 */
import type { Logger } from '../../lib/logger.js';
import type { ResourceLedger } from '../cloud/ledger-port.js';
import type { KubeObject } from '../cloud/kubernetes-port.js';
import type { Queryable } from '../db/database.js';
import { type LedgerEntry, recordCreated, recordDestroyed } from './rows.js';

/**
 * The provider name the ledger's rows carry: the name of the cloud provider whose services made the change. The
 * worker's DNS, certificate and Kubernetes clients are AWS's (Route 53, ACM, EKS), which Smarter's `AWSProvider`
 * names `aws` for all three (its Kubernetes service takes the configured provider's name).
 */
export const LEDGER_PROVIDER = 'aws';

const bare = (name: string) => name.trim().replace(/\.$/, '').toLowerCase();

export class InfrastructureLedger implements ResourceLedger {
  constructor(
    private readonly db: Queryable,
    private readonly logger: Logger,
    readonly provider: string = LEDGER_PROVIDER,
  ) {}

  /** A resource created, or changed (the receivers of `billable_resource_created` and `resource_created`). */
  async created(entry: LedgerEntry): Promise<void> {
    try {
      await recordCreated(this.db, this.provider, entry);
    } catch (err) {
      this.logger.error('infrastructure ledger: could not record a resource created', { ...entry, error: String(err) });
    }
  }

  /** A resource destroyed (the receivers of `billable_resource_destroyed` and `resource_destroyed`). */
  async destroyed(entry: LedgerEntry): Promise<void> {
    try {
      await recordDestroyed(this.db, this.provider, entry);
    } catch (err) {
      this.logger.error('infrastructure ledger: could not record a resource destroyed', {
        ...entry,
        error: String(err),
      });
    }
  }

  /** `DNSService.get_or_create_zone`: a hosted zone, billable (Route 53 bills each one), named by its domain. */
  zoneCreated(zone: { id: string; name: string }): Promise<void> {
    return this.created(dnsZone(zone));
  }

  zoneDestroyed(zone: { id: string; name: string }): Promise<void> {
    return this.destroyed(dnsZone(zone));
  }

  /** `DNSService.get_or_create_record`: a record set, "<name> <TYPE>", whose id is its zone's. */
  recordCreated(zoneId: string, name: string, type: string): Promise<void> {
    return this.created(dnsRecord(zoneId, name, type));
  }

  /** `DNSService.delete_record`. */
  recordDestroyed(zoneId: string, name: string, type: string): Promise<void> {
    return this.destroyed(dnsRecord(zoneId, name, type));
  }

  /** `CertificateService.get_or_create_certificate`: named by its domain, its ARN the id, not billable (ACM's public certificates are free). */
  certificateCreated(certificate: { arn: string; domain: string }): Promise<void> {
    return this.created(acmCertificate(certificate));
  }

  /**
   * `KubernetesService.apply_manifest`: each applied resource that provisions a billable cloud resource (see
   * `billableResources`), as `kubernetes.<kind>`, its name also its id.
   */
  async kubernetesApplied(objects: readonly KubeObject[]): Promise<void> {
    for (const [kind, name] of billableResources(objects)) {
      await this.created({ service: 'kubernetes', type: `kubernetes.${kind}`, name, id: name, billable: true });
    }
  }

  /** `KubernetesService.delete_resource`: any kind, billable when it is a PersistentVolumeClaim. */
  kubernetesDeleted(kind: string, name: string): Promise<void> {
    const k = kind.toLowerCase();
    return this.destroyed({
      service: 'kubernetes',
      type: `kubernetes.${k}`,
      name,
      id: name,
      billable: BILLABLE_KINDS.has(k),
    });
  }

  /** `CertificateService.delete_certificate`. */
  certificateDestroyed(certificate: { arn: string; domain: string }): Promise<void> {
    return this.destroyed(acmCertificate(certificate));
  }
}

const dnsZone = (zone: { id: string; name: string }): LedgerEntry => ({
  service: 'dns',
  type: 'dns.zone',
  name: bare(zone.name),
  id: zone.id,
  billable: true,
});

const dnsRecord = (zoneId: string, name: string, type: string): LedgerEntry => ({
  service: 'dns',
  type: 'dns.record',
  name: `${bare(name)} ${type.toUpperCase()}`,
  id: zoneId,
  billable: false,
});

const acmCertificate = (c: { arn: string; domain: string }): LedgerEntry => ({
  service: 'certificates',
  type: 'certificate',
  name: bare(c.domain),
  id: c.arn,
  billable: false,
});

/** Smarter's `BILLABLE_KUBERNETES_KINDS`: kinds that provision a billable cloud resource of their own. */
const BILLABLE_KINDS = new Set(['persistentvolumeclaim']);

/**
 * Smarter's `billable_resources(manifest)`: the (lowercase kind, name) of each PersistentVolumeClaim, StatefulSet
 * with volume claim templates, and Service of type LoadBalancer.
 */
export function billableResources(objects: readonly KubeObject[]): [string, string][] {
  const out: [string, string][] = [];
  for (const o of objects) {
    const kind = o.kind.toLowerCase();
    const spec = (o.spec ?? {}) as { volumeClaimTemplates?: unknown[]; type?: string };
    if (
      BILLABLE_KINDS.has(kind) ||
      (kind === 'statefulset' && (spec.volumeClaimTemplates ?? []).length > 0) ||
      (kind === 'service' && spec.type === 'LoadBalancer')
    ) {
      out.push([kind, o.metadata.name]);
    }
  }
  return out;
}
