/**
 * Public DNS through node:dns's promise Resolver (c-ares), asking SMARTER_DNS_SERVERS or the system's
 * resolvers. The answers a check acts on are told apart: NXDOMAIN (the name does not exist: ENOTFOUND) and
 * NODATA (it exists without records of that type: ENODATA) are answers; a timeout, SERVFAIL or a refusal is
 * no answer at all and is thrown as `Unavailable`, so a task never reads "not delegated yet" into a resolver
 * that did not reply. The Resolver's own `timeout` and `tries` bound the wait.
 */
import { promises as dns } from 'node:dns';
import type { Logger } from '../../lib/logger.js';
import { cloudCall, messageOf } from './call.js';
import { CloudError } from './errors.js';
import type { LookupResult, LookupType, Resolver } from './resolver-port.js';

const dot = (v: string) => v.replace(/\.$/, '');
const CAA_TAGS = ['issue', 'issuewild', 'iodef', 'contactemail', 'contactphone'] as const;

export interface ResolverOptions {
  /** `setServers` form: `1.2.3.4`, `1.2.3.4:5353`, `[::1]:53`; empty for the system's. */
  servers: string[];
  timeoutSeconds: number;
  tries: number;
}

const ANSWERS: Record<string, LookupResult['status']> = { ENOTFOUND: 'nxdomain', ENODATA: 'nodata' };

export class DnsResolver implements Resolver {
  private readonly resolver: dns.Resolver;

  constructor(
    options: ResolverOptions,
    private readonly logger: Logger,
  ) {
    this.resolver = new dns.Resolver({
      timeout: Math.max(1, Math.round(options.timeoutSeconds * 1000)),
      tries: options.tries,
    });
    if (options.servers.length > 0) this.resolver.setServers(options.servers);
  }

  async lookup(name: string, type: LookupType): Promise<LookupResult> {
    const host = name.replace(/\.$/, '');
    const resource = `${host} ${type}`;
    return cloudCall(
      this.logger,
      'dns',
      'lookup',
      resource,
      (err) => {
        const code = (err as { code?: unknown } | null)?.code;
        const kind = code === 'EBADNAME' || code === 'EBADQUERY' || code === 'EFORMERR' ? 'Invalid' : 'Unavailable';
        return new CloudError(
          'dns',
          'lookup',
          resource,
          kind,
          `${typeof code === 'string' ? `${code}: ` : ''}${messageOf(err)}`,
          { cause: err },
        );
      },
      async () => {
        try {
          return { status: 'found', values: await this.resolve(host, type) };
        } catch (err) {
          const status = ANSWERS[String((err as { code?: unknown } | null)?.code)];
          if (status === 'nxdomain' || status === 'nodata') return { status };
          throw err;
        }
      },
    );
  }

  /** The answers in Route 53's presentation form (`10 mail.example.com` for an MX), names without the trailing dot. */
  private async resolve(host: string, type: LookupType): Promise<string[]> {
    const r = this.resolver;
    switch (type) {
      case 'A':
        return r.resolve4(host);
      case 'AAAA':
        return r.resolve6(host);
      case 'CAA':
        return (await r.resolveCaa(host)).map((c) => {
          const tag = CAA_TAGS.find((k) => c[k] !== undefined);
          return tag ? `${c.critical} ${tag} "${c[tag] ?? ''}"` : `${c.critical}`;
        });
      case 'CNAME':
        return (await r.resolveCname(host)).map(dot);
      case 'MX':
        return (await r.resolveMx(host)).map((m) => `${m.priority} ${dot(m.exchange).toLowerCase()}`);
      case 'NAPTR':
        return (await r.resolveNaptr(host)).map(
          (n) => `${n.order} ${n.preference} "${n.flags}" "${n.service}" "${n.regexp}" ${n.replacement || '.'}`,
        );
      case 'NS':
        return (await r.resolveNs(host)).map((v) => dot(v).toLowerCase());
      case 'PTR':
        return (await r.resolvePtr(host)).map(dot);
      case 'SOA': {
        const o = await r.resolveSoa(host);
        return [`${o.nsname} ${o.hostmaster} ${o.serial} ${o.refresh} ${o.retry} ${o.expire} ${o.minttl}`];
      }
      case 'SRV':
        return (await r.resolveSrv(host)).map((v) => `${v.priority} ${v.weight} ${v.port} ${dot(v.name)}`);
      case 'TXT':
        // A TXT record is a list of strings that together make one value.
        return (await r.resolveTxt(host)).map((chunks) => chunks.join(''));
    }
  }
}
