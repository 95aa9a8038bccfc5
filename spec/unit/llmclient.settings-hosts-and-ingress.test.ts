/** The llmclient tasks' pure parts: Smarter's derived settings, host names, the Ingress, the time scale. */
import { SmarterValueError } from '../../tasks/errors.js';
import { loadConfig } from '../../lib/config/settings.js';
import { taskEnv } from '../../tasks/env/task-env.js';
import {
  accountNumberOfHost,
  customHost,
  defaultHost,
  domainName,
  llmclientLabel,
  netlocOf,
  recordName,
  rfc1034CompliantStr,
} from '../../tasks/llmclient/hosts.js';
import { certificateReady, ingressManifest } from '../../tasks/llmclient/ingress.js';
import { derived } from '../../tasks/env/settings.js';
import { SETTINGS } from '../../tasks/settings.js';

// smarter/smarter/common/conf/settings.py (`environment_api_domain`, `root_api_domain`, `proxy_api_domain`,
// `environment_namespace`), smarter/smarter/apps/infrastructure/services/dns.py (the local environment's proxy
// domain) and smarter/smarter/apps/llmclient/models/llmclient.py (`base_api_domain`).
test.each([
  [
    'alpha',
    undefined,
    {
      apiDomain: 'alpha.api.platform.smarter.sh',
      llmclientApiDomain: 'alpha.api.platform.smarter.sh',
      platformName: 'smarter',
      namespace: 'smarter-platform-alpha',
    },
  ],
  [
    'alpha',
    'ubc',
    {
      apiDomain: 'alpha.api.ubc.smarter.sh',
      llmclientApiDomain: 'alpha.api.ubc.smarter.sh',
      platformName: 'smarter',
      namespace: 'smarter-ubc-alpha',
    },
  ],
  [
    'prod',
    'ubc',
    {
      apiDomain: 'api.ubc.smarter.sh',
      llmclientApiDomain: 'api.ubc.smarter.sh',
      platformName: 'smarter',
      namespace: 'smarter-ubc-prod',
    },
  ],
  [
    'local',
    undefined,
    {
      apiDomain: 'local.api.smarter.sh',
      llmclientApiDomain: 'api.local.smarter.sh',
      platformName: 'smarter',
      namespace: 'smarter-local',
    },
  ],
])(
  'API domains, namespace and platform name are derived as Smarter derives them: %s, platform subdomain %s',
  (environment, platformSubdomain, want) => {
    expect(
      derived({ environment, rootDomain: 'smarter.sh', ...(platformSubdomain ? { platformSubdomain } : {}) }),
    ).toEqual(want);
  },
);

test("Smarter's env names, with or without SMARTER_, and the time scale", () => {
  const { values } = loadConfig(SETTINGS, {
    LLM_CLIENT_TASKS_CREATE_DNS_RECORD: 'False',
    SMARTER_LLM_CLIENT_TASKS_DEFAULT_TTL: '300',
    SMARTER_ROOT_DOMAIN: 'Example.ORG.',
    SMARTER_PLATFORM_SUBDOMAIN: 'UBC',
    SMARTER_WORKER_CHECK_TIME_SCALE: '0.01',
  });
  expect([
    values.createDnsRecord,
    values.createIngressManifest,
    values.defaultTtl,
    values.rootDomain,
    values.platformSubdomain,
    values.checkTimeScale,
  ]).toEqual([false, true, 300, 'example.org', 'ubc', 0.01]);
  expect(loadConfig(SETTINGS, {}).values.platformSubdomain).toBe('platform');
  expect(() => loadConfig(SETTINGS, { PLATFORM_SUBDOMAIN: 'a.b' })).toThrow(/PLATFORM_SUBDOMAIN/);
  expect(() => loadConfig(SETTINGS, { SMARTER_WORKER_CHECK_TIME_SCALE: '0' })).toThrow(
    /SMARTER_WORKER_CHECK_TIME_SCALE/,
  );
  const env = taskEnv({
    operationalQueue: 'o',
    infrastructureQueue: 'i',
    maxRetries: 3,
    retryBackoff: true,
    checkTimeScale: 0.01,
  });
  expect([env.wait(600), env.wait(60), env.wait(1800)]).toEqual([6, 0.6, 18]);
});

// Expected values computed with smarter/smarter/common/utils/rfc1034_compliance.py's `rfc1034_compliant_str`.
test.each([
  ['My Bot', 'mybot'],
  ['a__b', 'a--b'],
  ['v1.2', 'v12'],
  ['Sales_Bot', 'sales-bot'],
  ['  --Hello--World--  ', 'hello--world'],
  ['a-.-b', 'a--b'],
  ['-_-x-_-', 'x'],
  ['Café Bot', 'cafbot'],
  ['Ünïcödé_Ñame', 'ncd-ame'],
  ['Straße', 'strae'],
  ['İstanbul', 'istanbul'],
  ['\u212Aelvin', 'kelvin'],
  ['bot 1!@#$%^&*()+=[]{};:\'",<>/?\\|`~2', 'bot12'],
  ['x'.repeat(70), 'x'.repeat(63)],
  // Cut at 63 after the strip, so a hyphen can end the label, as in Smarter.
  [`${'a'.repeat(62)}_b`, `${'a'.repeat(62)}-`],
])('rfc1034_compliant_str(%j) is %j', (input, want) => {
  expect(rfc1034CompliantStr(input)).toBe(want);
});

test.each(['', '___', '日本語', '.'])('rfc1034_compliant_str(%j) has nothing left: SmarterValueError', (input) => {
  expect(() => rfc1034CompliantStr(input)).toThrow(SmarterValueError);
});

// smarter/smarter/apps/llmclient/models/llmclient.py, `LLMClient.rfc1034_compliant_name`.
test.each([
  ['Support_Bot', 'admin', true, 'support-bot'],
  ['Support_Bot', 'jane.doe', false, 'support-bot-janedoe'],
  ['Support_Bot', 'user_1', false, 'support-bot-user-1'],
  ['My Bot', 'Ann Lee', false, 'mybot-annlee'],
  ['a__b', 'x', false, 'a--b-x'],
  ['日本語', 'kenji', false, 'kenji'],
  ['B'.repeat(60), 'member', false, `${'b'.repeat(60)}-me`],
  ['B'.repeat(60), 'admin', true, 'b'.repeat(60)],
])('the host label of LLMClient %j owned by %j (admin: %s) is %j', (name, ownerUsername, ownerIsAdmin, want) => {
  expect(llmclientLabel({ name, ownerUsername, ownerIsAdmin })).toBe(want);
});

const l = {
  id: 7,
  name: 'Stackademy_API',
  ownerUsername: 'jane.doe',
  ownerIsAdmin: true,
  deployed: true,
  dnsStatus: 'Verified',
  tlsStatus: 'Issued',
  accountId: 1,
  accountNumber: '3141-5926-5359',
  customDomain: null,
};

test("default and custom hosts, the admin's and a member's", () => {
  expect(defaultHost(l, 'alpha.api.platform.example.com')).toBe(
    'stackademy-api.3141-5926-5359.alpha.api.platform.example.com',
  );
  expect(defaultHost({ ...l, ownerIsAdmin: false }, 'alpha.api.platform.example.com')).toBe(
    'stackademy-api-janedoe.3141-5926-5359.alpha.api.platform.example.com',
  );
  const cd = {
    id: 1,
    domainName: 'bots.example.net',
    zoneId: 'Z1',
    status: 'Verifying',
    message: '',
    verifiedAt: null,
    userProfileId: 1,
    accountId: 1,
  };
  expect(customHost({ ...l, customDomain: cd })).toBeNull();
  expect(customHost({ ...l, customDomain: { ...cd, status: 'Verified' } })).toBe('stackademy-api.bots.example.net');
  expect(customHost({ ...l, ownerIsAdmin: false, customDomain: { ...cd, status: 'Verified' } })).toBe(
    'stackademy-api-janedoe.bots.example.net',
  );
});

// smarter/smarter/apps/llmclient/tasks/delete_default_api.py: `urlparse(api_url).netloc`, `_account_number_from_hostname`.
test('delete_default_api reads the host as urlparse does, and its account number from the second label', () => {
  expect(
    ['https://a.1234-5678-9012.api.x.com/', '//a.b/c', 'http://h?q', 'a.1234-5678-9012.api.x.com', 'https:a.b'].map(
      netlocOf,
    ),
  ).toEqual(['a.1234-5678-9012.api.x.com', 'a.b', 'h', '', '']);
  expect(
    [
      'my-bot.1234-5678-9012.alpha.api.platform.x.com',
      'a.1234-5678-9012',
      'a.1234-5678.api.x.com',
      'a.b.1234-5678-9012.x.com',
      '',
    ].map(accountNumberOfHost),
  ).toEqual(['1234-5678-9012', null, null, null, null]);
});

test('record names are only normalised, and a local host is refused', () => {
  expect(recordName('_DMARC.Example.COM.', 'x')).toBe('_dmarc.example.com');
  expect(recordName('_sip._tcp.example.com', 'x')).toBe('_sip._tcp.example.com');
  expect(() => recordName('localhost', 'create_custom_domain_dns_record record_name')).toThrow(
    'create_custom_domain_dns_record record_name: Domain localhost is prohibited.',
  );
});

// smarter/smarter/apps/llmclient/k8s/ingress.yaml.tpl
test("the Ingress carries the labels of Smarter's template", () => {
  const ing = ingressManifest({
    host: 'h.example.com',
    namespace: 'smarter-platform-alpha',
    platformName: 'smarter',
    clusterIssuer: 'alpha.api.platform.smarter.sh',
  });
  expect(ing.metadata.labels).toEqual({
    'app.kubernetes.io/application-group': 'smarter',
    'app.kubernetes.io/name': 'smarter',
  });
});

test('a malformed domain is a SmarterValueError naming where it came from', () => {
  expect(domainName('Example.COM.', 'x')).toBe('example.com');
  expect(() => domainName('localhost', 'x')).toThrow('x: Domain localhost is prohibited.');
  for (const bad of ['a..b', '-a.com', 'a b.com', '']) {
    expect(() => domainName(bad, 'register_custom_domain domain_name')).toThrow(
      /^register_custom_domain domain_name: .* is not a valid domain name$/,
    );
  }
});

test('a cert-manager Certificate is ready only with condition Ready=True', () => {
  const cert = (status: string) => ({
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    metadata: { name: 'c' },
    status: { conditions: [{ type: 'Ready', status }] },
  });
  expect([certificateReady(cert('True')), certificateReady(cert('False')), certificateReady(null)]).toEqual([
    true,
    false,
    false,
  ]);
});
