/**
 * A custom domain's ACM certificate: found, or requested (with `*.<domain>`), and its DNS validation CNAMEs kept
 * in the domain's hosted zone, as Smarter's `CertificateService.get_or_create_certificate` and
 * `create_validation_records` do. ACM publishes the validation records a moment after the request; rather than
 * wait for them as Smarter does, each check writes whatever it has.
 */
import type { Certificate } from '../cloud/acm-port.js';
import type { CloudDeps } from '../cloud/cloud-deps.js';

/** Smarter's `VALIDATION_RECORD_TTL` (`smarter/apps/infrastructure/services/certificates.py`). */
export const VALIDATION_RECORD_TTL = 300;

export async function ensureCertificate(cloud: CloudDeps, zoneId: string, domain: string): Promise<Certificate> {
  const cert = (await cloud.acm.find(domain)) ?? (await cloud.acm.request(domain));
  await cloud.ledger?.certificateCreated(cert);
  if (cert.status === 'PENDING_VALIDATION') {
    for (const r of cert.validationRecords) {
      await cloud.route53.upsertRecord(zoneId, { ...r, ttl: VALIDATION_RECORD_TTL });
    }
    for (const r of cert.validationRecords) await cloud.ledger?.recordCreated(zoneId, r.name, r.type);
  }
  return cert;
}
