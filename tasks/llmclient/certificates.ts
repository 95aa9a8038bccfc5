/**
 * A custom domain's ACM certificate: found, or requested (with `*.<domain>`), and its DNS validation CNAMEs kept
 * in the domain's hosted zone, as Smarter's `get_or_create_certificate` and `get_or_create_certificate_dns_record`
 * do. ACM publishes the validation records a moment after the request, so each check writes whatever it has.
 */
import type { Certificate, CloudDeps } from '../cloud/ports.js';

export async function ensureCertificate(cloud: CloudDeps, zoneId: string, domain: string, ttl: number): Promise<Certificate> {
  const cert = (await cloud.acm.find(domain)) ?? (await cloud.acm.request(domain));
  await cloud.ledger?.certificateCreated(cert);
  if (cert.status === 'PENDING_VALIDATION') {
    for (const r of cert.validationRecords) await cloud.route53.upsertRecord(zoneId, { ...r, ttl: r.ttl || ttl });
    for (const r of cert.validationRecords) await cloud.ledger?.recordCreated(zoneId, r.name, r.type);
  }
  return cert;
}
