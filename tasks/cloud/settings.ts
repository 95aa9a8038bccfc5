/**
 * Settings of the cloud adapters. SMTP is read under the names Smarter reads (`smarter/common/conf/defaults.py`:
 * `get_env("SMTP_HOST")`…, NAME then SMARTER_NAME), with Smarter's defaults. AWS has no settings here: endpoint,
 * region and credentials come from the SDK's own chain (AWS_ENDPOINT_URL, AWS_ENDPOINT_URL_ROUTE_53,
 * AWS_ENDPOINT_URL_ACM, AWS_ACCESS_KEY_ID…, AWS_PROFILE, IRSA's AWS_WEB_IDENTITY_TOKEN_FILE), and Kubernetes from
 * KUBECONFIG or the pod's service account, as every other client of theirs reads them.
 */
import net from 'node:net';
import { ParseError, parsers, type Setting } from '../../lib/config/settings.js';
import { both } from '../smarter-env.js';

const setting = <T>(s: Setting<T>): Setting<T> => s;

/** `host[:port]` items as node:dns's `setServers` takes them: IPv4 `1.2.3.4[:53]`, IPv6 `[::1][:53]` or bare. */
export function parseDnsServers(text: string): string[] {
  return parsers.list(text).map((item) => {
    const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(item);
    const v4 = /^([\d.]+)(?::(\d+))?$/.exec(item);
    const [host, port] = bracketed ? [bracketed[1], bracketed[2]] : v4 ? [v4[1], v4[2]] : [item, undefined];
    const family = net.isIP(host ?? '');
    if (family === 0) {
      throw new ParseError(
        `${JSON.stringify(item)} is not an IP address with an optional port (host[:port], IPv6 as [addr]:port)`,
      );
    }
    if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) {
      throw new ParseError(`${JSON.stringify(item)}: port out of range`);
    }
    if (port === undefined) return host as string;
    return family === 6 ? `[${host}]:${port}` : `${host}:${port}`;
  });
}

export const CLOUD_SETTINGS = {
  dnsServers: setting<string[]>({
    env: ['SMARTER_DNS_SERVERS'],
    default: [],
    shownDefault: "the system's resolvers",
    parse: parseDnsServers,
    doc: 'Resolvers the DNS checks ask, `host[:port]`, comma separated (IPv6 as `[addr]:port`).',
  }),
  dnsTimeout: setting({
    env: ['SMARTER_DNS_TIMEOUT'],
    default: 5,
    parse: parsers.seconds,
    doc: 'Seconds a DNS query waits for an answer before it is sent again.',
  }),
  dnsTries: setting({
    env: ['SMARTER_DNS_TRIES'],
    default: 2,
    parse: parsers.int(1, 10),
    doc: 'Times a DNS query is sent to each resolver before the lookup is a timeout (`Unavailable`, never NXDOMAIN).',
  }),
  smtpHost: setting({
    env: both('SMTP_HOST'),
    default: 'email-smtp.us-east-2.amazonaws.com',
    parse: parsers.string,
    doc: "SMTP server (Smarter's default is Amazon SES).",
  }),
  smtpPort: setting({ env: both('SMTP_PORT'), default: 587, parse: parsers.int(1, 65535), doc: 'SMTP port.' }),
  smtpUseSsl: setting({
    env: both('SMTP_USE_SSL'),
    default: false,
    parse: parsers.bool,
    doc: 'Implicit TLS from the first byte (port 465).',
  }),
  smtpUseTls: setting({
    env: both('SMTP_USE_TLS'),
    default: true,
    parse: parsers.bool,
    doc: "STARTTLS, required when on (Smarter's default).",
  }),
  smtpUsername: setting({
    env: both('SMTP_USERNAME'),
    default: '',
    parse: parsers.string,
    secret: true,
    doc: 'SMTP user (never logged).',
  }),
  smtpPassword: setting({
    env: both('SMTP_PASSWORD'),
    default: '',
    parse: parsers.string,
    secret: true,
    doc: 'SMTP password (never logged).',
  }),
  smtpFromEmail: setting({
    env: both('SMTP_FROM_EMAIL'),
    default: '',
    shownDefault: 'none',
    parse: parsers.string,
    doc: 'From address of the e-mails. As in Smarter, mail is sent only when host, port, user, password and this are all set; otherwise it is logged and skipped.',
  }),
  emailAdmin: setting({
    env: both('EMAIL_ADMIN'),
    default: '',
    shownDefault: 'none',
    parse: parsers.string,
    doc: 'Blind copy of every e-mail, unless the admin is a recipient, as Smarter sends.',
  }),
  smtpTimeout: setting({
    env: ['SMARTER_WORKER_SMTP_TIMEOUT'],
    default: 30,
    parse: parsers.seconds,
    doc: 'Seconds to connect, be greeted and for each reply of the SMTP server before a send fails.',
  }),
};
