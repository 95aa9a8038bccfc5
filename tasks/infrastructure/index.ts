/** Smarter's eleven LLMClient infrastructure tasks (smarter-contract.md §3.2), all on the infrastructure queue. */
import type { AnyTask } from '../../lib/registry/define-task.js';
import { continueDefaultApiDeployment } from './continue-default-api-deployment.js';
import { createCustomDomainDnsRecord } from './create-custom-domain-dns-record.js';
import { deleteDefaultApi } from './delete-default-api.js';
import { deployCustomApi } from './deploy-custom-api.js';
import { deployDefaultApi } from './deploy-default-api.js';
import { destroyDomainARecord } from './destroy-domain-a-record.js';
import type { InfraDeps, InfraEnv } from './env.js';
import { registerCustomDomain } from './register-custom-domain.js';
import { undeployDefaultApi } from './undeploy-default-api.js';
import { verifyCertificate } from './verify-certificate.js';
import { verifyCustomDomain } from './verify-custom-domain.js';
import { verifyDomain } from './verify-domain.js';

export function infrastructureTasks(env: InfraEnv): AnyTask<InfraDeps>[] {
  return [
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
