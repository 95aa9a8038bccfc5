/**
 * `verify_certificate(certificate_arn)` → True/False/None. Smarter blocks in `wait_until_issued` (boto3's waiter:
 * every 60 s, 40 times); we check once and `checkAgain` on the same schedule. The reschedule carries an `attempt`
 * keyword, which Smarter's function lacks: a Python worker would refuse it, so run this task on our workers only.
 * Smarter has no caller of it left.
 */
import * as z from 'zod';
import { defineTask } from '../../lib/registry/define-task.js';
import type { Rescheduled } from '../../lib/registry/context.js';
import { CloudError } from '../cloud/ports.js';
import { type InfraDeps, type InfraEnv } from './env.js';
import { orGaveUp } from './gave-up.js';
import { TASK } from './names.js';

export const CERTIFICATE_WAIT_INTERVAL = 60;
export const CERTIFICATE_WAIT_ATTEMPTS = 40;

export const verifyCertificate = (env: InfraEnv) =>
  defineTask<{ certificate_arn: string; attempt: number }, Rescheduled | boolean, InfraDeps>({
    name: TASK.verifyCertificate,
    queue: env.queue,
    retry: env.retry,
    checks: { maxAttempts: CERTIFICATE_WAIT_ATTEMPTS },
    params: z.strictObject({ certificate_arn: z.string().min(1), attempt: z.number().int().nonnegative().default(0) }),
    async run(p, ctx) {
      const cert = await ctx.deps.cloud.acm.describe(p.certificate_arn);
      if (!cert) throw new CloudError('acm', 'describe certificate', p.certificate_arn, 'NotFound', 'no such certificate');
      if (cert.status === 'ISSUED') return true;
      if (cert.status !== 'PENDING_VALIDATION') {
        ctx.logger.error(`certificate ${cert.arn} for ${cert.domain} is ${cert.status}; it will not be issued`);
        return false;
      }
      const again = await orGaveUp(() => ctx.checkAgain({ after: env.wait(CERTIFICATE_WAIT_INTERVAL) }));
      if (again) return again;
      ctx.logger.error(`certificate ${cert.arn} for ${cert.domain} still not issued after ${CERTIFICATE_WAIT_ATTEMPTS} checks`);
      return false;
    },
  });
