/**
 * `verify_domain(domain_name, record_type="A", llmclient_id=None, activate_llmclient=False, hosted_zone_id=None,
 * task_id=None, attempt=0)` → True/False/None: the record exists in Route 53 (the API domain's zone unless
 * `hosted_zone_id`) and resolves publicly. PENDING (exists, does not resolve yet) checks again every 300 s, 48
 * checks in all; MISSING fails at once. A failure marks the LLMClient's DNS Failed; success with
 * `activate_llmclient` deploys it.
 */
import * as z from 'zod';
import type { Rescheduled } from '../../lib/registry/context.js';
import { RECORD_TYPES, type RecordType } from '../cloud/route53-port.js';
import { pk } from '../db/django.js';
import type { TaskEnv } from '../env/task-env.js';
import { infrastructureTask } from '../env/queued-task.js';
import { checkDomain } from './dns.js';
import { orGaveUp } from './gave-up.js';
import { domainName } from './hosts.js';
import { DNS, findLlmclient, updateLlmclient } from './rows.js';

export const VERIFY_DOMAIN_INTERVAL = 300;
export const VERIFY_DOMAIN_MAX_ATTEMPTS = 48;

/** Any type Route 53 accepts, in any case, as Smarter's `record_type`. */
const recordType = z
  .string()
  .transform((t) => t.toUpperCase())
  .pipe(z.enum(RECORD_TYPES));

export const verifyDomain = (env: TaskEnv) =>
  infrastructureTask<
    {
      domain_name: string;
      record_type: RecordType;
      llmclient_id: number | null;
      activate_llmclient: boolean;
      hosted_zone_id: string | null;
      task_id: string | null;
      attempt: number;
    },
    Rescheduled | boolean
  >(env, {
    name: 'smarter.apps.llmclient.tasks.verify_domain.verify_domain',
    checks: { maxAttempts: VERIFY_DOMAIN_MAX_ATTEMPTS, firstRunIdParam: 'task_id' },
    params: z.strictObject({
      domain_name: z.string(),
      record_type: recordType.default('A'),
      llmclient_id: pk().nullable().default(null),
      activate_llmclient: z.boolean().default(false),
      hosted_zone_id: z.string().nullable().default(null),
      task_id: z.string().nullable().default(null),
      attempt: z.number().int().nonnegative().default(0),
    }),
    async run(p, ctx) {
      const { db, cloud } = ctx.deps;
      const name = domainName(p.domain_name, 'verify_domain domain_name');
      const l = p.llmclient_id === null ? null : await findLlmclient(db, p.llmclient_id);
      if (p.attempt === 0) ctx.logger.info(`verifying ${p.record_type} ${name}`, { task_id: p.task_id ?? ctx.id });
      const result = await checkDomain(cloud, {
        name,
        type: p.record_type,
        apiDomain: env.apiDomain,
        zoneId: p.hosted_zone_id,
      });
      if (result === 'pending') {
        const again = await orGaveUp(() => ctx.checkAgain({ after: env.wait(VERIFY_DOMAIN_INTERVAL) }));
        if (again) return again;
      }
      if (result !== 'verified') {
        ctx.logger.error(`unable to verify ${name} (${result}) after ${p.attempt + 1} check(s)`);
        if (l) await updateLlmclient(db, l.id, { dns_verification_status: DNS.FAILED });
        return false;
      }
      if (p.activate_llmclient && l && !l.deployed) await updateLlmclient(db, l.id, { deployed: true });
      return true;
    },
  });
