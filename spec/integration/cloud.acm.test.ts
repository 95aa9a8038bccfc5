/**
 * The ACM adapter through the real AWS SDK against moto's server. moto issues a requested certificate once it
 * is described more than MOTO_ACM_VALIDATION_WAIT (here 1) whole seconds after the request.
 */
import { randomUUID } from 'node:crypto';
import { waitFor } from '../support/wait.js';
import { useMotoBehindFaultProxy } from '../support/aws-faults.js';
import { cloudFailure, testCloud } from '../support/cloud.js';
import type { Certificates } from '../../tasks/cloud/acm-port.js';

const aws = useMotoBehindFaultProxy({ acmValidationWait: 1 });
let acm: Certificates;

beforeAll(() => {
  acm = testCloud().acm;
});

const domain = () => `c${randomUUID().slice(0, 8)}.example.com`;

test('own wiring: a request is PENDING_VALIDATION with its DNS validation CNAME, then ISSUED once validated', async () => {
  const d = domain();
  const requested = await acm.request(d);
  expect(requested.arn).toMatch(/^arn:aws:acm:us-east-1:\d+:certificate\//);
  expect(requested.domain).toBe(d);
  expect(requested.status).toBe('PENDING_VALIDATION');
  // One record proves both the domain and its `*.` SAN.
  expect(requested.validationRecords).toHaveLength(1);
  const [record] = requested.validationRecords;
  expect(record?.type).toBe('CNAME');
  expect(record?.name).toMatch(new RegExp(`^_[0-9a-f]+\\.${d.replace(/\./g, '\\.')}$`));
  expect(record?.values[0]).toMatch(/\.acm-validations\.aws$/);
  const issued = await waitFor(
    async () => {
      const c = await acm.describe(requested.arn);
      return c?.status === 'ISSUED' ? c : undefined;
    },
    15_000,
    250,
  );
  expect(issued.validationRecords).toEqual(requested.validationRecords);
});

test('own wiring: the same request twice is one certificate (idempotency token), other SANs are another', async () => {
  const d = domain();
  const a = await acm.request(d);
  const b = await acm.request(d);
  expect(b.arn).toBe(a.arn);
  const c = await acm.request(d, [`api.${d}`]);
  expect(c.arn).not.toBe(a.arn);
});

test('own wiring: find gives the newest certificate for exactly that domain, or null', async () => {
  const d = domain();
  expect(await acm.find(d)).toBeNull();
  const first = await acm.request(d);
  // moto's creation times have a resolution of one second.
  await new Promise((r) => setTimeout(r, 1100));
  const second = await acm.request(d, [`www.${d}`]);
  await acm.request(`api.${d}`);
  expect((await acm.find(d))?.arn).toBe(second.arn);
  expect((await acm.find(`${d}.`))?.arn).not.toBe(first.arn);
});

test('own wiring: describe of a certificate that does not exist is null', async () => {
  expect(
    await acm.describe('arn:aws:acm:us-east-1:123456789012:certificate/00000000-0000-0000-0000-000000000000'),
  ).toBeNull();
});

test('own wiring: ACM throttling (JSON ThrottlingException) is retried, then the call succeeds', async () => {
  const d = domain();
  const before = aws.proxy.faulted.length;
  aws.proxy.failNext(2, 'Throttling');
  expect((await acm.request(d)).domain).toBe(d);
  expect(aws.proxy.faulted.length - before).toBe(2);
});

test('own wiring: ACM AccessDeniedException is a CloudError AccessDenied naming the verb and the domain', async () => {
  aws.proxy.failNext(1, 'AccessDenied', 'RequestCertificate');
  const err = await cloudFailure(acm.request('denied.example.com'));
  expect(err).toMatchObject({
    service: 'acm',
    verb: 'RequestCertificate',
    resource: 'denied.example.com',
    kind: 'AccessDenied',
  });
  expect(err.message).toContain('AccessDeniedException');
});

test('own wiring: an invalid domain is a CloudError Invalid from ACM, not a crash', async () => {
  const err = await cloudFailure(acm.request('not a domain'));
  expect(err).toMatchObject({ service: 'acm', verb: 'RequestCertificate', kind: 'Invalid' });
});

// smarter/smarter/apps/infrastructure/providers/aws/helpers/base.py: the boto3 session (and so ACM) is in
// `smarter_settings.aws_region`.
test('own wiring: certificates are requested and found in AWS_REGION, not in a fixed region', async () => {
  const saved = process.env.AWS_REGION;
  process.env.AWS_REGION = 'eu-west-1';
  try {
    const regional = testCloud().acm;
    const d = domain();
    const cert = await regional.request(d);
    expect(cert.arn).toMatch(/^arn:aws:acm:eu-west-1:\d+:certificate\//);
    expect((await regional.find(d))?.arn).toBe(cert.arn);
    // us-east-1's ACM does not have it.
    expect(await acm.find(d)).toBeNull();
  } finally {
    process.env.AWS_REGION = saved;
  }
});
