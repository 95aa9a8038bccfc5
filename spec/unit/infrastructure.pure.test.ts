/** The infrastructure tasks' pure parts: Smarter's derived settings, host names, the Ingress, the time scale. */
import { loadConfig } from '../../lib/config/settings.js';
import { taskEnv } from '../../tasks/index.js';
import { infraEnv } from '../../tasks/llmclient/env.js';
import { customHost, defaultHost, domainName, rfc1034Name } from '../../tasks/llmclient/hosts.js';
import { certificateReady } from '../../tasks/llmclient/ingress.js';
import { INFRASTRUCTURE_DEFAULTS, derived } from '../../tasks/llmclient/settings.js';
import { SETTINGS } from '../../tasks/settings.js';

test('API domain, namespace and platform name are derived as Smarter derives them', () => {
  expect(derived({ environment: 'alpha', rootDomain: 'smarter.sh' })).toEqual({ apiDomain: 'alpha.api.smarter.sh', platformName: 'smarter', namespace: 'smarter-platform-alpha' });
  expect(derived({ environment: 'prod', rootDomain: 'smarter.sh' }).apiDomain).toBe('api.smarter.sh');
});

test('Smarter\'s env names, with or without SMARTER_, and the time scale', () => {
  const { values } = loadConfig(SETTINGS, { LLM_CLIENT_TASKS_CREATE_DNS_RECORD: 'False', SMARTER_LLM_CLIENT_TASKS_DEFAULT_TTL: '300', SMARTER_ROOT_DOMAIN: 'Example.ORG.', SMARTER_WORKER_CHECK_TIME_SCALE: '0.01' });
  expect([values.createDnsRecord, values.createIngressManifest, values.defaultTtl, values.rootDomain, values.checkTimeScale]).toEqual([false, true, 300, 'example.org', 0.01]);
  expect(() => loadConfig(SETTINGS, { SMARTER_WORKER_CHECK_TIME_SCALE: '0' })).toThrow(/SMARTER_WORKER_CHECK_TIME_SCALE/);
  const env = infraEnv(taskEnv({ operationalQueue: 'o', infrastructureQueue: 'i', maxRetries: 3, retryBackoff: true }), { ...INFRASTRUCTURE_DEFAULTS, checkTimeScale: 0.01 });
  expect([env.wait(600), env.wait(60), env.wait(1800)]).toEqual([6, 0.6, 18]);
});

const l = { id: 7, name: 'Stackademy_API', deployed: true, dnsStatus: 'Verified', tlsStatus: 'Issued', accountId: 1, accountNumber: '3141-5926-5359', customDomain: null };

test('default and custom hosts', () => {
  expect(rfc1034Name('Stackademy_API')).toBe('stackademy-api');
  expect(defaultHost(l, 'alpha.api.example.com')).toBe('stackademy-api.3141-5926-5359.alpha.api.example.com');
  const cd = { id: 1, domainName: 'bots.example.net', zoneId: 'Z1', status: 'Verifying', message: '', verifiedAt: null, userProfileId: 1, accountId: 1 };
  expect(customHost({ ...l, customDomain: cd })).toBeNull();
  expect(customHost({ ...l, customDomain: { ...cd, status: 'Verified' } })).toBe('stackademy-api.bots.example.net');
});

test('a malformed domain is a SmarterValueError naming where it came from', () => {
  expect(domainName('Example.COM.', 'x')).toBe('example.com');
  for (const bad of ['localhost', 'a..b', '-a.com', 'a b.com', '']) {
    expect(() => domainName(bad, 'register_custom_domain domain_name')).toThrow(/^register_custom_domain domain_name: .* is not a valid domain name$/);
  }
});

test('a cert-manager Certificate is ready only with condition Ready=True', () => {
  const cert = (status: string) => ({ apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'c' }, status: { conditions: [{ type: 'Ready', status }] } });
  expect([certificateReady(cert('True')), certificateReady(cert('False')), certificateReady(null)]).toEqual([true, false, false]);
});
