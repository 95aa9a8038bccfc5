/**
 * A real DNS server on loopback UDP (dns2), authoritative for whatever names a test sets, changed at run time:
 *
 *   const dns = await startDnsServer();
 *   dns.set('api.example.com', 'A', ['192.0.2.10']);
 *   process.env.SMARTER_DNS_SERVERS = dns.server;        // "127.0.0.1:PORT"
 *   dns.setMode('silent');                                // never answers (the timeout case)
 *
 * Unknown names are NXDOMAIN; a known name without records of the asked type is NODATA (NOERROR, no answer,
 * with an SOA in the authority section as real servers send); a name with a CNAME answers with the CNAME and,
 * when this server knows the target, the target's records.
 */
import dns2 from 'dns2';

export type StandInRecordType = 'A' | 'AAAA' | 'CNAME' | 'NS' | 'TXT' | 'MX' | 'SRV';
export type DnsMode = 'answer' | 'silent' | 'servfail';

export interface DnsStandIn {
  /** `127.0.0.1:PORT`, the form SMARTER_DNS_SERVERS takes. */
  server: string;
  port: number;
  /** Replaces the records of `type` at `name` (TXT values are single strings). */
  set(name: string, type: StandInRecordType, values: string[], ttl?: number): void;
  /** Removes the records of `type` at `name`, or every record of `name`. */
  remove(name: string, type?: StandInRecordType): void;
  clear(): void;
  setMode(mode: DnsMode): void;
  /** Every question received, as `name TYPE`. */
  readonly queries: string[];
  stop(): Promise<void>;
}

const { Packet } = dns2;
const TYPES: Record<StandInRecordType, number> = {
  A: Packet.TYPE.A,
  AAAA: Packet.TYPE.AAAA,
  CNAME: Packet.TYPE.CNAME,
  NS: Packet.TYPE.NS,
  TXT: Packet.TYPE.TXT,
  MX: Packet.TYPE.MX,
  SRV: Packet.TYPE.SRV,
};
/** RFC 1035 §4.1.1 response codes (dns2 has them at run time but not in its types). */
const RCODE = { SERVFAIL: 2, NXDOMAIN: 3 } as const;
const TYPE_NAMES = new Map<number, string>(Object.entries(Packet.TYPE).map(([k, v]) => [v as number, k]));

const norm = (name: string) => name.replace(/\.$/, '').toLowerCase();

export async function startDnsServer(): Promise<DnsStandIn> {
  const zone = new Map<string, Map<StandInRecordType, { values: string[]; ttl: number }>>();
  const queries: string[] = [];
  let mode: DnsMode = 'answer';

  const rdata = (type: StandInRecordType, value: string): Partial<dns2.Packet.Resource> => {
    switch (type) {
      case 'A':
      case 'AAAA':
        return { address: value };
      case 'CNAME':
        return { domain: norm(value) };
      case 'NS':
        return { ns: norm(value) };
      case 'TXT':
        return { data: value };
      // Presentation form, as Route 53 holds them: `10 mail.example.com`, `10 5 5060 sip.example.com`.
      case 'MX': {
        const [priority, exchange] = value.split(' ');
        return { priority: Number(priority), exchange: norm(exchange ?? '') };
      }
      case 'SRV': {
        const [priority, weight, port, target] = value.split(' ');
        return { priority: Number(priority), weight: Number(weight), port: Number(port), target: norm(target ?? '') };
      }
    }
  };
  const answersFor = (name: string, type: StandInRecordType): dns2.Packet.Resource[] => {
    const rrs = zone.get(name)?.get(type);
    if (!rrs) return [];
    return rrs.values.map(
      (v) =>
        ({ name, type: TYPES[type], class: Packet.CLASS.IN, ttl: rrs.ttl, ...rdata(type, v) }) as dns2.Packet.Resource,
    );
  };
  const soa = (name: string): dns2.Packet.Resource =>
    ({
      name: name.split('.').slice(-2).join('.'),
      type: Packet.TYPE.SOA,
      class: Packet.CLASS.IN,
      ttl: 60,
      primary: 'ns.stand-in.test',
      admin: 'hostmaster.stand-in.test',
      serial: 1,
      refresh: 60,
      retry: 60,
      expiration: 600,
      minimum: 60,
    }) as dns2.Packet.Resource;

  const server = dns2.createUDPServer((request, send) => {
    const question = request.questions[0];
    if (!question) return;
    const name = norm(question.name);
    const typeName = TYPE_NAMES.get(question.type) ?? String(question.type);
    queries.push(`${name} ${typeName}`);
    if (mode === 'silent') return;
    const response = Packet.createResponseFromRequest(request);
    response.header.aa = 1;
    if (mode === 'servfail') {
      response.header.rcode = RCODE.SERVFAIL;
      void send(response);
      return;
    }
    const records = zone.get(name);
    if (!records) {
      response.header.rcode = RCODE.NXDOMAIN;
      response.authorities.push(soa(name));
      void send(response);
      return;
    }
    const type = typeName as StandInRecordType;
    if (type in TYPES && records.has(type)) {
      response.answers.push(...answersFor(name, type));
    } else if (records.has('CNAME') && type in TYPES) {
      response.answers.push(...answersFor(name, 'CNAME'));
      const target = norm(records.get('CNAME')?.values[0] ?? '');
      response.answers.push(...answersFor(target, type));
    }
    if (response.answers.length === 0) response.authorities.push(soa(name));
    void send(response);
  });
  await server.listen(0, '127.0.0.1');
  const { port } = server.address();
  return {
    server: `127.0.0.1:${port}`,
    port,
    set(name, type, values, ttl = 60) {
      const n = norm(name);
      const records = zone.get(n) ?? new Map<StandInRecordType, { values: string[]; ttl: number }>();
      records.set(type, { values: [...values], ttl });
      zone.set(n, records);
    },
    remove(name, type) {
      const n = norm(name);
      if (type === undefined) zone.delete(n);
      else {
        zone.get(n)?.delete(type);
        if (zone.get(n)?.size === 0) zone.delete(n);
      }
    },
    clear: () => zone.clear(),
    setMode(m) {
      mode = m;
    },
    queries,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
