/**
 * The Route 53 adapter through the real AWS SDK against moto's server, with a fault proxy in between that
 * answers chosen requests as AWS does when it throttles or denies.
 */
import { randomUUID } from 'node:crypto';
import { useMotoBehindFaultProxy } from '../support/aws-faults.js';
import { cloudFailure, testCloud } from '../support/cloud.js';
import { recordingLogger } from '../support/logs.js';
import type { DnsZones } from '../../tasks/cloud/route53-port.js';

const aws = useMotoBehindFaultProxy();
let zones: DnsZones;
const log = recordingLogger();

beforeAll(() => {
  zones = testCloud({}, log).route53;
});

const domain = () => `t${randomUUID().slice(0, 8)}.example.com`;

describe('own wiring: zones', () => {
  test('getOrCreateZone twice makes one zone, with name servers, and findZone finds it by its exact name only', async () => {
    const d = domain();
    const a = await zones.getOrCreateZone(d);
    const b = await zones.getOrCreateZone(`${d}.`);
    expect(b.id).toBe(a.id);
    expect(a.name).toBe(d);
    expect(a.id).not.toMatch(/^\/hostedzone\//);
    expect(a.nameServers.length).toBeGreaterThan(0);
    expect((await zones.findZone(d))?.id).toBe(a.id);
    expect(await zones.findZone(`api.${d}`)).toBeNull();
    expect(await zones.findZone(d.replace(/^t/, 's'))).toBeNull();
    expect((await zones.getZone(a.id))?.nameServers).toEqual(a.nameServers);
  });

  test('a malformed domain is a CloudError Invalid naming it, and nothing is created', async () => {
    const before = aws.proxy.forwarded.length;
    const err = await cloudFailure(zones.getOrCreateZone('not a domain!'));
    expect(err).toMatchObject({
      service: 'route53',
      verb: 'ListHostedZonesByName',
      resource: 'not a domain!',
      kind: 'Invalid',
    });
    expect(
      (await cloudFailure(zones.upsertRecord('Z1', { name: 'a..b', type: 'A', ttl: 60, values: ['192.0.2.1'] }))).kind,
    ).toBe('Invalid');
    expect(aws.proxy.forwarded.length).toBe(before);
  });

  test('an unknown zone id is null, not an error', async () => {
    expect(await zones.getZone('Z0000000000000NOSUCH')).toBeNull();
  });

  test('record calls on a zone that does not exist fail NotFound, naming the verb and the zone', async () => {
    const err = await cloudFailure(
      zones.upsertRecord('Z0000000000000NOSUCH', {
        name: 'api.example.com',
        type: 'A',
        ttl: 60,
        values: ['192.0.2.1'],
      }),
    );
    expect(err).toMatchObject({
      service: 'route53',
      kind: 'NotFound',
      verb: 'ChangeResourceRecordSets UPSERT',
      resource: 'Z0000000000000NOSUCH/api.example.com A',
    });
    expect(err.message).toMatch(
      /^route53 ChangeResourceRecordSets UPSERT Z0000000000000NOSUCH\/api\.example\.com A: NotFound: NoSuchHostedZone/,
    );
    expect((await cloudFailure(zones.getRecord('Z0000000000000NOSUCH', 'api.example.com', 'A'))).kind).toBe('NotFound');
  });
});

describe('own wiring: records', () => {
  test('UPSERT creates, replaces on a second call, and getRecord reads it back (A, CNAME, NS, TXT)', async () => {
    const d = domain();
    const zone = await zones.getOrCreateZone(d);
    await zones.upsertRecord(zone.id, { name: `api.${d}`, type: 'A', ttl: 600, values: ['192.0.2.1'] });
    await zones.upsertRecord(zone.id, { name: `api.${d}`, type: 'A', ttl: 300, values: ['192.0.2.2', '192.0.2.3'] });
    expect(await zones.getRecord(zone.id, `api.${d}`, 'A')).toEqual({
      name: `api.${d}`,
      type: 'A',
      ttl: 300,
      values: ['192.0.2.2', '192.0.2.3'],
    });

    await zones.upsertRecord(zone.id, { name: `www.${d}`, type: 'CNAME', ttl: 300, values: [`api.${d}`] });
    expect((await zones.getRecord(zone.id, `www.${d}`, 'CNAME'))?.values).toEqual([`api.${d}`]);

    await zones.upsertRecord(zone.id, {
      name: `sub.${d}`,
      type: 'NS',
      ttl: 172800,
      values: ['ns-1.awsdns-01.org', 'ns-2.awsdns-02.net'],
    });
    expect((await zones.getRecord(zone.id, `sub.${d}`, 'NS'))?.values).toEqual([
      'ns-1.awsdns-01.org',
      'ns-2.awsdns-02.net',
    ]);

    const txt = 'smarter-verification="a b" \\ end';
    await zones.upsertRecord(zone.id, { name: `_smarter.${d}`, type: 'TXT', ttl: 60, values: [txt] });
    expect((await zones.getRecord(zone.id, `_smarter.${d}`, 'TXT'))?.values).toEqual([txt]);
  });

  // smarter/smarter/apps/infrastructure/providers/aws/dns.py: `to_record_set` sends a quoted TXT value as it is.
  test('a TXT value that comes quoted is one string, read back without its quotes', async () => {
    const d = domain();
    const zone = await zones.getOrCreateZone(d);
    await zones.upsertRecord(zone.id, { name: `_dmarc.${d}`, type: 'TXT', ttl: 60, values: ['"v=DMARC1; p=none"'] });
    expect((await zones.getRecord(zone.id, `_dmarc.${d}`, 'TXT'))?.values).toEqual(['v=DMARC1; p=none']);
  });

  test('the other types Route 53 holds (MX, SRV, CAA) are written and read back', async () => {
    const d = domain();
    const zone = await zones.getOrCreateZone(d);
    await zones.upsertRecord(zone.id, { name: d, type: 'MX', ttl: 300, values: [`10 mail.${d}`] });
    await zones.upsertRecord(zone.id, {
      name: `_sip._tcp.${d}`,
      type: 'SRV',
      ttl: 300,
      values: [`10 5 5060 sip.${d}`],
    });
    await zones.upsertRecord(zone.id, { name: d, type: 'CAA', ttl: 300, values: ['0 issue "amazon.com"'] });
    expect((await zones.getRecord(zone.id, d, 'MX'))?.values).toEqual([`10 mail.${d}`]);
    expect((await zones.getRecord(zone.id, `_sip._tcp.${d}`, 'SRV'))?.values).toEqual([`10 5 5060 sip.${d}`]);
    expect((await zones.getRecord(zone.id, d, 'CAA'))?.values).toEqual(['0 issue "amazon.com"']);
  });

  test('getRecord of a name or type that is not there is null (the next name in the zone is not it)', async () => {
    const d = domain();
    const zone = await zones.getOrCreateZone(d);
    await zones.upsertRecord(zone.id, { name: `b.${d}`, type: 'A', ttl: 60, values: ['192.0.2.9'] });
    expect(await zones.getRecord(zone.id, `a.${d}`, 'A')).toBeNull();
    expect(await zones.getRecord(zone.id, `b.${d}`, 'TXT')).toBeNull();
  });

  test('deleteRecord twice: the first deletes (true), the second finds nothing and is still success (false)', async () => {
    const d = domain();
    const zone = await zones.getOrCreateZone(d);
    await zones.upsertRecord(zone.id, { name: `api.${d}`, type: 'A', ttl: 60, values: ['192.0.2.1'] });
    await expect(zones.deleteRecord(zone.id, `api.${d}`, 'A')).resolves.toBe(true);
    await expect(zones.deleteRecord(zone.id, `api.${d}`, 'A')).resolves.toBe(false);
    expect(await zones.getRecord(zone.id, `api.${d}`, 'A')).toBeNull();
  });

  test('an alias A record (the API domain pointing at its load balancer) is read and copied as an alias', async () => {
    const d = domain();
    const zone = await zones.getOrCreateZone(d);
    const alias = {
      zoneId: 'Z35SXDOTRQ7X7K',
      dnsName: 'k8s-smarter-1234.us-east-1.elb.amazonaws.com',
      evaluateTargetHealth: false,
    };
    await zones.upsertRecord(zone.id, { name: `api.${d}`, type: 'A', ttl: 0, values: [], alias });
    const read = await zones.getRecord(zone.id, `api.${d}`, 'A');
    expect(read?.alias).toEqual(alias);
    expect(read?.values).toEqual([]);
    await zones.upsertRecord(zone.id, { ...(read as NonNullable<typeof read>), name: `client.${d}` });
    expect((await zones.getRecord(zone.id, `client.${d}`, 'A'))?.alias).toEqual(alias);
  });
});

describe('own wiring: AWS failures', () => {
  test('two Throttling answers are retried by the SDK (standard mode) and the call then succeeds', async () => {
    const d = domain();
    await zones.getOrCreateZone(d);
    const before = aws.proxy.faulted.length;
    aws.proxy.failNext(2, 'Throttling');
    expect((await zones.findZone(d))?.name).toBe(d);
    expect(aws.proxy.faulted.length - before).toBe(2);
  });

  test('a 503 is retried as well', async () => {
    const d = domain();
    aws.proxy.failNext(1, 'ServiceUnavailable');
    expect((await zones.getOrCreateZone(d)).name).toBe(d);
    expect(await zones.findZone(d)).not.toBeNull();
  });

  test("throttling that outlasts the SDK's attempts is a CloudError Throttled naming the verb and resource", async () => {
    aws.proxy.failNext(10, 'Throttling');
    const err = await cloudFailure(zones.findZone('throttled.example.com'));
    expect(err).toMatchObject({
      service: 'route53',
      verb: 'ListHostedZonesByName',
      resource: 'throttled.example.com',
      kind: 'Throttled',
    });
    expect(err.message).toContain('Rate exceeded');
  });

  test('a 403 AccessDenied is not retried and is a CloudError AccessDenied naming the verb and resource', async () => {
    const before = aws.proxy.faulted.length;
    aws.proxy.failNext(1, 'AccessDenied');
    const err = await cloudFailure(zones.findZone('denied.example.com'));
    expect(err).toMatchObject({
      service: 'route53',
      verb: 'ListHostedZonesByName',
      resource: 'denied.example.com',
      kind: 'AccessDenied',
    });
    expect(err.message).toMatch(/is not authorized to perform: route53:/);
    expect(err.pyType).toBe('CloudError');
    expect(aws.proxy.faulted.length - before).toBe(1);
  });

  test('an endpoint that does not answer is Unavailable', async () => {
    const saved = process.env.AWS_ENDPOINT_URL;
    process.env.AWS_ENDPOINT_URL = 'http://127.0.0.1:9';
    try {
      const offline = testCloud().route53;
      expect((await cloudFailure(offline.findZone('example.com'))).kind).toBe('Unavailable');
    } finally {
      process.env.AWS_ENDPOINT_URL = saved;
    }
  });
});

test('own wiring: AWS_ENDPOINT_URL_ROUTE_53 wins over AWS_ENDPOINT_URL (the SDK chain, no setting of ours)', async () => {
  const d = domain();
  await zones.getOrCreateZone(d);
  const saved = process.env.AWS_ENDPOINT_URL;
  process.env.AWS_ENDPOINT_URL = 'http://127.0.0.1:9';
  process.env.AWS_ENDPOINT_URL_ROUTE_53 = aws.proxy.endpoint;
  try {
    expect((await testCloud().route53.findZone(d))?.name).toBe(d);
  } finally {
    process.env.AWS_ENDPOINT_URL = saved;
    delete process.env.AWS_ENDPOINT_URL_ROUTE_53;
  }
});

test('own wiring: every call is logged at debug with service, verb and resource', async () => {
  const d = domain();
  await zones.getOrCreateZone(d);
  const calls = log.lines.filter((l) => l.level === 'debug' && l.message === 'cloud call' && l.meta.resource === d);
  expect(calls.map((l) => l.meta.verb)).toEqual(expect.arrayContaining(['ListHostedZonesByName', 'CreateHostedZone']));
  expect(calls.every((l) => l.meta.service === 'route53')).toBe(true);
});
