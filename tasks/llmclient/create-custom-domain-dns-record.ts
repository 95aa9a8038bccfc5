/**
 * `create_custom_domain_dns_record(llmclient_custom_domain_id, record_name, record_type, record_value,
 * record_ttl=600)`: get-or-create the record in the custom domain's hosted zone (a record already pointing at the
 * same values is left as it is, whatever its TTL), then its `llmclient_llmclientcustomdomaindns` row with the
 * record as Route 53 holds it: its values joined with "," and its TTL (the requested one for an alias). Any type
 * Route 53 accepts; an unknown custom domain fails with LLMClientCustomDomainNotFound.
 */
import * as z from 'zod';
import { type DnsRecord, RECORD_TYPES, type RecordType } from '../cloud/route53-port.js';
import { pk } from '../db/django.js';
import type { TaskEnv } from '../env/task-env.js';
import { infrastructureTask } from '../env/queued-task.js';
import { LLMClientCustomDomainNotFound, SmarterValueError } from '../errors.js';
import { sameTarget } from './dns.js';
import { recordName } from './hosts.js';
import { customDomainById, upsertCustomDomainDns } from './rows.js';

/**
 * A value as Route 53 returns it to Smarter's boto3 (and so as Smarter's row keeps it): a TXT string in its quotes.
 * The DNS port gives TXT strings unquoted; one that already has its quotes is kept as it is.
 */
const asRoute53Holds = (type: string, v: string) =>
  type === 'TXT' && !/^"[\s\S]*"$/.test(v) ? `"${v.replace(/(["\\])/g, '\\$1')}"` : v;

export const createCustomDomainDnsRecord = (env: TaskEnv) =>
  infrastructureTask<
    {
      llmclient_custom_domain_id: number;
      record_name: string;
      record_type: RecordType;
      record_value: string;
      record_ttl: number;
    },
    null
  >(env, {
    name: 'smarter.apps.llmclient.tasks.create_custom_domain_dns_record.create_custom_domain_dns_record',
    params: z.strictObject({
      llmclient_custom_domain_id: pk(),
      record_name: z.string(),
      record_type: z
        .string()
        .transform((t) => t.toUpperCase())
        .pipe(z.enum(RECORD_TYPES)),
      record_value: z.string().min(1),
      record_ttl: z.number().int().nonnegative().default(600),
    }),
    async run(p, ctx) {
      const { db, cloud } = ctx.deps;
      const cd = await customDomainById(db, p.llmclient_custom_domain_id);
      if (!cd) {
        throw new LLMClientCustomDomainNotFound(
          `create_custom_domain_dns_record: custom domain ${p.llmclient_custom_domain_id} not found (llmclient_llmclientcustomdomain)`,
        );
      }
      if (!cd.zoneId) {
        throw new SmarterValueError(
          `create_custom_domain_dns_record: ${cd.domainName} has no hosted zone yet; register it first`,
        );
      }
      const name = recordName(p.record_name, 'create_custom_domain_dns_record record_name');
      const wanted: DnsRecord = { name, type: p.record_type, ttl: p.record_ttl, values: [p.record_value] };
      let record = await cloud.route53.getRecord(cd.zoneId, name, p.record_type);
      if (!(record && sameTarget(record, wanted))) {
        await cloud.route53.upsertRecord(cd.zoneId, wanted);
        await cloud.ledger?.recordCreated(cd.zoneId, name, p.record_type);
        record = (await cloud.route53.getRecord(cd.zoneId, name, p.record_type)) ?? wanted;
      }
      await upsertCustomDomainDns(db, {
        customDomainId: cd.id,
        name: record.name,
        type: record.type,
        value: record.values.map((v) => asRoute53Holds(record.type, v)).join(','),
        ttl: record.ttl || p.record_ttl,
      });
      return null;
    },
  });
