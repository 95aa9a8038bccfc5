import { loadConfig } from '../../lib/config/settings.js';
import { CLOUD_SETTINGS, parseDnsServers } from '../../tasks/cloud/settings.js';
import { checkDnsName } from '../../tasks/cloud/call.js';
import { SETTINGS } from '../../tasks/settings.js';

describe('SMARTER_DNS_SERVERS', () => {
  test('takes host[:port] items, IPv6 bracketed with a port, in the form node:dns setServers wants', () => {
    expect(parseDnsServers('127.0.0.1:5353, 8.8.8.8,[::1]:53,2001:db8::1')).toEqual([
      '127.0.0.1:5353',
      '8.8.8.8',
      '[::1]:53',
      '2001:db8::1',
    ]);
  });

  test('refuses names and bad ports, naming the item', () => {
    expect(() => parseDnsServers('dns.google')).toThrow('"dns.google" is not an IP address');
    expect(() => parseDnsServers('127.0.0.1:0')).toThrow('port out of range');
  });

  test("unset means the system's resolvers", () => {
    expect(loadConfig(CLOUD_SETTINGS, {}).values.dnsServers).toEqual([]);
  });
});

test("SMTP is read under Smarter's names (NAME, then SMARTER_NAME), with Smarter's defaults, the secrets marked secret", () => {
  const { values } = loadConfig(CLOUD_SETTINGS, {
    SMARTER_SMTP_HOST: 'mail.internal',
    SMTP_PORT: '2525',
    SMTP_USE_TLS: 'False',
    SMTP_PASSWORD: 'p',
  });
  expect(values).toMatchObject({
    smtpHost: 'mail.internal',
    smtpPort: 2525,
    smtpUseTls: false,
    smtpUseSsl: false,
    smtpPassword: 'p',
  });
  expect(loadConfig(CLOUD_SETTINGS, {}).values).toMatchObject({
    smtpHost: 'email-smtp.us-east-2.amazonaws.com',
    smtpPort: 587,
    smtpUseTls: true,
  });
  expect(CLOUD_SETTINGS.smtpPassword.secret && CLOUD_SETTINGS.smtpUsername.secret).toBe(true);
  expect(Object.keys(SETTINGS)).toEqual(expect.arrayContaining(Object.keys(CLOUD_SETTINGS)));
});

test("no AWS setting of our own: endpoint, region and credentials are the SDK chain's", () => {
  const envNames = Object.values(CLOUD_SETTINGS).flatMap((s) => s.env);
  expect(envNames.filter((n) => n.startsWith('AWS_'))).toEqual([]);
});

test('DNS names are checked before any call: labels, wildcard first, underscores for validation records', () => {
  for (const ok of ['example.com', 'api.example.com.', '*.example.com', '_abc123.example.com']) {
    expect(() => checkDnsName('route53', 'v', ok)).not.toThrow();
  }
  for (const bad of ['', 'com', 'a..b', '-a.com', 'a b.com', 'a.*.com', `${'x'.repeat(64)}.com`]) {
    expect(() => checkDnsName('route53', 'v', bad)).toThrow('is not a DNS name');
  }
});
