/** ACM: the TLS certificates of custom domains, proven by DNS validation records in Route 53. */
import type { DnsRecord } from './route53-port.js';

export type CertificateStatus =
  'PENDING_VALIDATION' | 'ISSUED' | 'INACTIVE' | 'EXPIRED' | 'VALIDATION_TIMED_OUT' | 'REVOKED' | 'FAILED';

export interface Certificate {
  arn: string;
  domain: string;
  status: CertificateStatus;
  /** The CNAME records that prove ownership (ACM DNS validation), once ACM has made them. */
  validationRecords: DnsRecord[];
}

/** ACM, in the region of AWS_REGION, where Smarter's certificate service looks for them. */
export interface Certificates {
  /** The newest certificate for exactly `domain`, or null. */
  find(domain: string): Promise<Certificate | null>;
  describe(arn: string): Promise<Certificate | null>;
  /** Requests a DNS-validated certificate; SANs default to `*.<domain>`. */
  request(domain: string, subjectAlternativeNames?: string[]): Promise<Certificate>;
}
