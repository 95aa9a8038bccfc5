/**
 * `destroy_domain_A_record(hostname, api_host_domain, task_id=None)` (capital A, module `destroy_domain_a_record`):
 * deletes the A record of `hostname` from the hosted zone of `api_host_domain`. A record already gone is success.
 */
import * as z from 'zod';
import { defineTask } from '../../lib/registry/define-task.js';
import type { CloudDeps } from '../cloud/ports.js';
import { zoneOf } from './dns.js';
import { type InfraDeps, type InfraEnv } from './env.js';
import { domainName } from './hosts.js';
import { TASK } from './names.js';

/** Shared with delete_default_api and undeploy_default_api, which Smarter has call this task synchronously. */
export async function destroyARecord(cloud: CloudDeps, hostname: string, apiHostDomain: string): Promise<boolean> {
  const zone = await zoneOf(cloud, apiHostDomain, `to delete the A record of ${hostname}`);
  return cloud.route53.deleteRecord(zone.id, hostname, 'A');
}

export const destroyDomainARecord = (env: InfraEnv) =>
  defineTask<{ hostname: string; api_host_domain: string; task_id: string | null }, null, InfraDeps>({
    name: TASK.destroyDomainARecord,
    queue: env.queue,
    retry: env.retry,
    params: z.strictObject({ hostname: z.string(), api_host_domain: z.string(), task_id: z.string().nullable().default(null) }),
    async run(p, ctx) {
      const host = domainName(p.hostname, 'destroy_domain_A_record hostname');
      const api = domainName(p.api_host_domain, 'destroy_domain_A_record api_host_domain');
      const deleted = await destroyARecord(ctx.deps.cloud, host, api);
      ctx.logger.info(deleted ? `deleted the A record of ${host}` : `${host} had no A record`);
      return null;
    },
  });
