/**
 * Smarter's `llmclient` app: the eleven infrastructure tasks (`smarter.apps.llmclient.tasks.<module>.<name>`, on the
 * infrastructure queue) and `create_llmclient_request` (operational).
 *
 * Each infrastructure task begins, as Smarter's do, with `is_taskable()` (`tasks/cloud/readiness.ts`): when the cloud
 * is not ready it returns at once, successfully, with Smarter's value (None; False for `register_custom_domain` and
 * `verify_domain`). `verify_custom_domain` asks inside, after its lookup by `custom_domain_id`, as Smarter's does.
 */
import type { AnyTask } from '../../lib/registry/define-task.js';
import type { SmarterDeps, TaskEnv } from '../env/task-env.js';
import { whenTaskable } from '../cloud/readiness.js';
import { continueDefaultApiDeployment } from './continue-default-api-deployment.js';
import { createCustomDomainDnsRecord } from './create-custom-domain-dns-record.js';
import { deleteDefaultApi } from './delete-default-api.js';
import { deployCustomApi } from './deploy-custom-api.js';
import { deployDefaultApi } from './deploy-default-api.js';
import { destroyDomainARecord } from './destroy-domain-a-record.js';
import { createLlmclientRequest } from './create-llmclient-request.js';
import { registerCustomDomain } from './register-custom-domain.js';
import { undeployDefaultApi } from './undeploy-default-api.js';
import { verifyCertificate } from './verify-certificate.js';
import { verifyCustomDomain } from './verify-custom-domain.js';
import { verifyDomain } from './verify-domain.js';

export function llmclientTasks(env: TaskEnv): AnyTask<SmarterDeps>[] {
  return [
    createLlmclientRequest(env),
    whenTaskable(deployDefaultApi(env), null),
    whenTaskable(continueDefaultApiDeployment(env), null),
    whenTaskable(verifyDomain(env), false),
    verifyCustomDomain(env),
    whenTaskable(registerCustomDomain(env), false),
    whenTaskable(deployCustomApi(env), null),
    whenTaskable(createCustomDomainDnsRecord(env), null),
    whenTaskable(deleteDefaultApi(env), null),
    whenTaskable(destroyDomainARecord(env), null),
    whenTaskable(undeployDefaultApi(env), null),
    whenTaskable(verifyCertificate(env), null),
  ];
}

/** What the llmhost app uses of this one: the A record of a host under the API domain, and its removal. */
export { copyApiARecord } from './dns.js';
export { destroyDomainARecord } from './destroy-domain-a-record.js';
