/**
 * `destroy_domain_A_record(hostname, api_host_domain, task_id=None)` (capital A, module `destroy_domain_a_record`):
 * deletes the A record of `hostname` from the hosted zone of `api_host_domain`. As Smarter's
 * (`smarter/smarter/apps/llmclient/tasks/destroy_domain_a_record.py`), a record already gone, or a zone that does
 * not exist, is logged and is success: there is nothing to delete.
 */
import * as z from 'zod';
import type { Logger } from '../../lib/logger.js';
import type { TaskEnv } from '../env/task-env.js';
import { infrastructureTask } from '../env/queued-task.js';
import type { CloudDeps } from '../cloud/cloud-deps.js';
import { domainName } from './hosts.js';

/**
 * Shared with delete_default_api and undeploy_default_api, which Smarter has call this task synchronously, and
 * which therefore go on after it whatever it found.
 */
export async function destroyARecord(
  cloud: CloudDeps,
  hostname: string,
  apiHostDomain: string,
  log: Logger,
): Promise<'deleted' | 'absent' | 'no zone'> {
  const zone = await cloud.route53.findZone(apiHostDomain);
  if (!zone) {
    log.error(`destroy_domain_A_record() DNS zone not found for ${apiHostDomain}. Nothing to do, returning.`);
    return 'no zone';
  }
  if (await cloud.route53.deleteRecord(zone.id, hostname, 'A')) {
    await cloud.ledger?.recordDestroyed(zone.id, hostname, 'A');
    log.info(`destroy_domain_A_record() deleted the A record of ${hostname} from zone ${zone.id}`);
    return 'deleted';
  }
  log.error(`destroy_domain_A_record() A record not found for ${hostname}. Nothing to do, returning.`);
  return 'absent';
}

export const destroyDomainARecord = (env: TaskEnv) =>
  infrastructureTask<{ hostname: string; api_host_domain: string; task_id: string | null }, null>(env, {
    name: 'smarter.apps.llmclient.tasks.destroy_domain_a_record.destroy_domain_A_record',
    params: z.strictObject({
      hostname: z.string(),
      api_host_domain: z.string(),
      task_id: z.string().nullable().default(null),
    }),
    async run(p, ctx) {
      const host = domainName(p.hostname, 'destroy_domain_A_record hostname');
      const api = domainName(p.api_host_domain, 'destroy_domain_A_record api_host_domain');
      await destroyARecord(ctx.deps.cloud, host, api, ctx.logger);
      return null;
    },
  });
