/**
 * Smarter's `llmclient` app: the eleven infrastructure tasks (`smarter.apps.llmclient.tasks.<module>.<name>`, on the
 * infrastructure queue) and `create_llmclient_request` (operational).
 */
import type { AnyTask } from '../../lib/registry/define-task.js';
import { continueDefaultApiDeployment } from './continue-default-api-deployment.js';
import { createCustomDomainDnsRecord } from './create-custom-domain-dns-record.js';
import { deleteDefaultApi } from './delete-default-api.js';
import { deployCustomApi } from './deploy-custom-api.js';
import { deployDefaultApi } from './deploy-default-api.js';
import { destroyDomainARecord } from './destroy-domain-a-record.js';
import { createLlmclientRequest } from './create-llmclient-request.js';
import type { InfraDeps, InfraEnv } from './env.js';
import { registerCustomDomain } from './register-custom-domain.js';
import { undeployDefaultApi } from './undeploy-default-api.js';
import { verifyCertificate } from './verify-certificate.js';
import { verifyCustomDomain } from './verify-custom-domain.js';
import { verifyDomain } from './verify-domain.js';

export function llmclientTasks(env: InfraEnv): AnyTask<InfraDeps>[] {
  return [
    createLlmclientRequest(env),
    deployDefaultApi(env),
    continueDefaultApiDeployment(env),
    verifyDomain(env),
    verifyCustomDomain(env),
    registerCustomDomain(env),
    deployCustomApi(env),
    createCustomDomainDnsRecord(env),
    deleteDefaultApi(env),
    destroyDomainARecord(env),
    undeployDefaultApi(env),
    verifyCertificate(env),
  ];
}
