/**
 * The DNS adapter (node:dns's Resolver) against a real DNS server on loopback UDP, configured through
 * SMARTER_DNS_SERVERS as the worker is.
 */
import { cloudFailure, testCloud } from '../support/cloud.js';
import { startDnsServer, type DnsStandIn } from '../support/dns-server.js';
import type { Resolver } from '../../tasks/cloud/resolver-port.js';

let dns: DnsStandIn;
let resolver: Resolver;

beforeAll(async () => {
  dns = await startDnsServer();
  resolver = testCloud({
    SMARTER_DNS_SERVERS: dns.server,
    SMARTER_DNS_TIMEOUT: '0.3',
    SMARTER_DNS_TRIES: '1',
  }).resolver;
});
afterAll(async () => dns?.stop());
afterEach(() => {
  dns.setMode('answer');
  dns.clear();
});

test('own wiring: found: A, AAAA, NS, CNAME and TXT values as the server has them', async () => {
  dns.set('api.example.com', 'A', ['192.0.2.10', '192.0.2.11']);
  dns.set('api.example.com', 'AAAA', ['2001:db8::10']);
  dns.set('example.com', 'NS', ['NS-1.awsdns-01.org.', 'ns-2.awsdns-02.net']);
  dns.set('www.example.com', 'CNAME', ['api.example.com']);
  dns.set('_smarter.example.com', 'TXT', ['token=abc']);
  expect(await resolver.lookup('api.example.com', 'A')).toEqual({
    status: 'found',
    values: ['192.0.2.10', '192.0.2.11'],
  });
  expect(await resolver.lookup('api.example.com.', 'AAAA')).toEqual({ status: 'found', values: ['2001:db8::10'] });
  expect(await resolver.lookup('example.com', 'NS')).toEqual({
    status: 'found',
    values: ['ns-1.awsdns-01.org', 'ns-2.awsdns-02.net'],
  });
  expect(await resolver.lookup('www.example.com', 'CNAME')).toEqual({ status: 'found', values: ['api.example.com'] });
  // An A lookup follows the CNAME, as a browser's would.
  expect(await resolver.lookup('www.example.com', 'A')).toEqual({
    status: 'found',
    values: ['192.0.2.10', '192.0.2.11'],
  });
  expect(await resolver.lookup('_smarter.example.com', 'TXT')).toEqual({ status: 'found', values: ['token=abc'] });
});

// smarter/smarter/apps/llmclient/tasks/verify_domain.py resolves the record types Route 53 holds, MX and SRV too.
test("own wiring: found: MX and SRV answers in Route 53's presentation form", async () => {
  dns.set('example.com', 'MX', ['10 Mail.Example.com.', '20 backup.example.com']);
  dns.set('_sip._tcp.example.com', 'SRV', ['10 5 5060 sip.example.com']);
  expect(await resolver.lookup('example.com', 'MX')).toEqual({
    status: 'found',
    values: ['10 mail.example.com', '20 backup.example.com'],
  });
  expect(await resolver.lookup('_sip._tcp.example.com', 'SRV')).toEqual({
    status: 'found',
    values: ['10 5 5060 sip.example.com'],
  });
  expect(await resolver.lookup('example.com', 'SRV')).toEqual({ status: 'nodata' });
});

test('own wiring: a name that does not exist is nxdomain; one without records of that type is nodata', async () => {
  dns.set('api.example.com', 'A', ['192.0.2.10']);
  expect(await resolver.lookup('nothing.example.com', 'A')).toEqual({ status: 'nxdomain' });
  expect(await resolver.lookup('api.example.com', 'NS')).toEqual({ status: 'nodata' });
});

test('own wiring: a record set while a check waits is seen by the next lookup (pending, then found)', async () => {
  expect((await resolver.lookup('client.example.com', 'A')).status).toBe('nxdomain');
  dns.set('client.example.com', 'A', ['192.0.2.20']);
  expect(await resolver.lookup('client.example.com', 'A')).toEqual({ status: 'found', values: ['192.0.2.20'] });
  dns.set('client.example.com', 'A', ['192.0.2.21']);
  expect(await resolver.lookup('client.example.com', 'A')).toEqual({ status: 'found', values: ['192.0.2.21'] });
});

test('own wiring: a resolver that never answers is a CloudError Unavailable (a timeout), never an NXDOMAIN', async () => {
  dns.set('api.example.com', 'A', ['192.0.2.10']);
  dns.setMode('silent');
  const err = await cloudFailure(resolver.lookup('api.example.com', 'A'));
  expect(err).toMatchObject({ service: 'dns', verb: 'lookup', resource: 'api.example.com A', kind: 'Unavailable' });
  expect(err.message).toContain('ETIMEOUT');
});

test('own wiring: SERVFAIL is Unavailable too', async () => {
  dns.setMode('servfail');
  const err = await cloudFailure(resolver.lookup('api.example.com', 'NS'));
  expect(err).toMatchObject({ kind: 'Unavailable', resource: 'api.example.com NS' });
  expect(err.message).toContain('ESERVFAIL');
});
