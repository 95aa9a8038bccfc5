/**
 * `create_custom_domain_dns_record(llmclient_custom_domain_id, record_name, record_type, record_value,
 * record_ttl=600)`: get-or-create the record in the custom domain's hosted zone, and its
 * `llmclient_llmclientcustomdomaindns` row (values joined with ","). An unknown custom domain fails with
 * LLMClientCustomDomainNotFound.
 */
import * as z from 'zod';
import { defineTask } from '../../lib/registry/define-task.js';
import type { RecordType } from '../cloud/ports.js';
import { pk } from '../deps.js';
import { LLMClientCustomDomainNotFound, SmarterValueError } from '../errors.js';
import { type InfraDeps, type InfraEnv } from './env.js';
import { TASK } from './names.js';
import { customDomainById, upsertCustomDomainDns } from './rows.js';

const TYPES = ['A', 'AAAA', 'CNAME', 'NS', 'TXT', 'MX'] as const;

/** Record names may have labels host names may not (`_acme-challenge`), so only their shape is checked. */
function recordName(name: string): string {
  const v = name.trim().toLowerCase().replace(/\.$/, '');
  if (!/^(\*\.)?([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?\.)+[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(v)) {
    throw new SmarterValueError(`create_custom_domain_dns_record: ${JSON.stringify(name)} is not a valid record name`);
  }
  return v;
}

export const createCustomDomainDnsRecord = (env: InfraEnv) =>
  defineTask<{ llmclient_custom_domain_id: number; record_name: string; record_type: RecordType; record_value: string; record_ttl: number }, null, InfraDeps>({
    name: TASK.createCustomDomainDnsRecord,
    queue: env.queue,
    retry: env.retry,
    params: z.strictObject({
      llmclient_custom_domain_id: pk(),
      record_name: z.string(),
      record_type: z.string().transform((t) => t.toUpperCase()).pipe(z.enum(TYPES)),
      record_value: z.string().min(1),
      record_ttl: z.number().int().nonnegative().default(600),
    }),
    async run(p, ctx) {
      const { db } = ctx.deps;
      const cloud = ctx.deps.cloud;
      const cd = await customDomainById(db, p.llmclient_custom_domain_id);
      if (!cd) throw new LLMClientCustomDomainNotFound(`create_custom_domain_dns_record: custom domain ${p.llmclient_custom_domain_id} not found (llmclient_llmclientcustomdomain)`);
      if (!cd.zoneId) throw new SmarterValueError(`create_custom_domain_dns_record: ${cd.domainName} has no hosted zone yet; register it first`);
      const name = recordName(p.record_name);
      const existing = await cloud.route53.getRecord(cd.zoneId, name, p.record_type);
      const values = [p.record_value];
      // Smarter's `get_or_create_record`: a record with the same target is left as it is.
      if (!(existing && existing.values.length === 1 && existing.values[0] === p.record_value)) {
        await cloud.route53.upsertRecord(cd.zoneId, { name, type: p.record_type, ttl: p.record_ttl, values });
      }
      await upsertCustomDomainDns(db, { customDomainId: cd.id, name, type: p.record_type, value: values.join(','), ttl: p.record_ttl });
      return null;
    },
  });
