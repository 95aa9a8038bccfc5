/**
 * Certificates on ACM (`@aws-sdk/client-acm`), in the client's region: AWS_REGION, where Smarter's certificate
 * service (`providers/aws/helpers/acm.py`, on a boto3 session in `smarter_settings.aws_region`) looks for them.
 * A request carries an idempotency token made from its names, so the same request repeated within ACM's
 * hour (a task re-run after a crash) returns the certificate it already made instead of a second one.
 */
import { createHash } from 'node:crypto';
import {
  type ACMClient,
  type CertificateDetail,
  type CertificateStatus as AcmStatus,
  DescribeCertificateCommand,
  ListCertificatesCommand,
  RequestCertificateCommand,
} from '@aws-sdk/client-acm';
import { AwsAdapter } from './aws-adapter.js';
import { checkDnsName } from './call.js';
import type { Certificate, Certificates } from './acm-port.js';
import type { DnsRecord } from './route53-port.js';

const ALL_STATUSES: AcmStatus[] = [
  'PENDING_VALIDATION',
  'ISSUED',
  'INACTIVE',
  'EXPIRED',
  'VALIDATION_TIMED_OUT',
  'REVOKED',
  'FAILED',
];
const norm = (name: string) => name.replace(/\.$/, '').toLowerCase();

export class AcmCertificates extends AwsAdapter<ACMClient> implements Certificates {
  protected readonly service = 'acm';

  async find(domain: string): Promise<Certificate | null> {
    const wanted = norm(domain);
    const arns = await this.call('ListCertificates', domain, async () => {
      const found: string[] = [];
      let next: string | undefined;
      do {
        const out = await this.client.send(
          new ListCertificatesCommand({ CertificateStatuses: ALL_STATUSES, NextToken: next, MaxItems: 100 }),
        );
        for (const s of out.CertificateSummaryList ?? []) {
          if (s.CertificateArn && s.DomainName && norm(s.DomainName) === wanted) found.push(s.CertificateArn);
        }
        next = out.NextToken;
      } while (next);
      return found;
    });
    // The summaries do not all carry a creation time; the details do.
    const details = (await Promise.all(arns.map((arn) => this.detail(arn)))).filter(
      (d): d is CertificateDetail => d !== null,
    );
    details.sort((a, b) => (b.CreatedAt?.getTime() ?? 0) - (a.CreatedAt?.getTime() ?? 0));
    return details[0] ? toCertificate(details[0]) : null;
  }

  async describe(arn: string): Promise<Certificate | null> {
    const d = await this.detail(arn);
    return d ? toCertificate(d) : null;
  }

  async request(domain: string, subjectAlternativeNames?: string[]): Promise<Certificate> {
    const sans = subjectAlternativeNames ?? [`*.${norm(domain)}`];
    const arn = await this.call('RequestCertificate', domain, async () => {
      for (const name of [domain, ...sans]) checkDnsName('acm', 'RequestCertificate', name);
      const token = createHash('sha256')
        .update([norm(domain), ...sans.map(norm)].join(' '))
        .digest('hex')
        .slice(0, 32);
      const out = await this.client.send(
        new RequestCertificateCommand({
          DomainName: norm(domain),
          ValidationMethod: 'DNS',
          SubjectAlternativeNames: sans,
          IdempotencyToken: token,
        }),
      );
      if (!out.CertificateArn) throw new Error('RequestCertificate answered without an ARN');
      return out.CertificateArn;
    });
    // ACM adds the validation records a few seconds after the request; a later describe() sees them.
    return (
      (await this.describe(arn)) ?? { arn, domain: norm(domain), status: 'PENDING_VALIDATION', validationRecords: [] }
    );
  }

  private detail(arn: string): Promise<CertificateDetail | null> {
    return this.call('DescribeCertificate', arn, async () => {
      try {
        const out = await this.client.send(new DescribeCertificateCommand({ CertificateArn: arn }));
        return out.Certificate ?? null;
      } catch (err) {
        if ((err as { name?: string }).name === 'ResourceNotFoundException') return null;
        throw err;
      }
    });
  }
}

function toCertificate(d: CertificateDetail): Certificate {
  const records = new Map<string, DnsRecord>();
  for (const o of d.DomainValidationOptions ?? []) {
    const r = o.ResourceRecord;
    // `example.com` and `*.example.com` are proved by one and the same record.
    if (r?.Name && r.Value) {
      records.set(norm(r.Name), { name: norm(r.Name), type: 'CNAME', ttl: 300, values: [norm(r.Value)] });
    }
  }
  return {
    arn: d.CertificateArn ?? '',
    domain: norm(d.DomainName ?? ''),
    status: d.Status ?? 'PENDING_VALIDATION',
    validationRecords: [...records.values()],
  };
}
