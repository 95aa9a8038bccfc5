/**
 * `verify_certificate(certificate_arn)` → None. Smarter blocks in `CertificateService.wait_until_issued`: 20
 * checks, 30 s apart (`issue_wait_attempts`, `issue_wait_seconds`), then logs whether the certificate was issued.
 * We check once and `checkAgain` on the same schedule. The reschedule carries an `attempt` keyword, which
 * Smarter's function lacks: a Python worker would refuse it, so run this task on our workers only. A certificate
 * in a state it cannot leave (FAILED, REVOKED, …) ends at once, with the error Smarter logs after its last check.
 * Smarter has no caller of it left.
 */
import * as z from 'zod';
import type { Rescheduled } from '../../lib/registry/context.js';
import type { TaskEnv } from '../env/task-env.js';
import { infrastructureTask } from '../env/queued-task.js';
import { CloudError } from '../cloud/errors.js';
import { orGaveUp } from './gave-up.js';

export const CERTIFICATE_WAIT_INTERVAL = 30;
export const CERTIFICATE_WAIT_ATTEMPTS = 20;

export const verifyCertificate = (env: TaskEnv) =>
  infrastructureTask<{ certificate_arn: string; attempt: number }, Rescheduled | null>(env, {
    name: 'smarter.apps.llmclient.tasks.verify_certificate.verify_certificate',
    checks: { maxAttempts: CERTIFICATE_WAIT_ATTEMPTS },
    params: z.strictObject({ certificate_arn: z.string().min(1), attempt: z.number().int().nonnegative().default(0) }),
    async run(p, ctx) {
      const cert = await ctx.deps.cloud.acm.describe(p.certificate_arn);
      if (!cert) {
        throw new CloudError('acm', 'describe certificate', p.certificate_arn, 'NotFound', 'no such certificate');
      }
      if (cert.status === 'ISSUED') {
        ctx.logger.info(`certificate ${cert.arn} for ${cert.domain} verified`);
        return null;
      }
      if (cert.status !== 'PENDING_VALIDATION') {
        ctx.logger.error(
          `certificate ${cert.arn} for ${cert.domain} verification failed: it is ${cert.status}, and will not be issued`,
        );
        return null;
      }
      const again = await orGaveUp(() => ctx.checkAgain({ after: env.wait(CERTIFICATE_WAIT_INTERVAL) }));
      if (again) return again;
      ctx.logger.error(
        `certificate ${cert.arn} for ${cert.domain} verification failed: not issued after ${CERTIFICATE_WAIT_ATTEMPTS} checks`,
      );
      return null;
    },
  });
