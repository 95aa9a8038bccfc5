/** Smarter's registered names: `smarter.apps.llmclient.tasks.<module>.<function>` (note `destroy_domain_A_record`). */
const base = 'smarter.apps.llmclient.tasks';

export const TASK = {
  deployDefaultApi: `${base}.deploy_default_api.deploy_default_api`,
  continueDefaultApiDeployment: `${base}.deploy_default_api.continue_default_api_deployment`,
  verifyDomain: `${base}.verify_domain.verify_domain`,
  verifyCustomDomain: `${base}.verify_custom_domain.verify_custom_domain`,
  registerCustomDomain: `${base}.register_custom_domain.register_custom_domain`,
  deployCustomApi: `${base}.deploy_custom_api.deploy_custom_api`,
  createCustomDomainDnsRecord: `${base}.create_custom_domain_dns_record.create_custom_domain_dns_record`,
  deleteDefaultApi: `${base}.delete_default_api.delete_default_api`,
  destroyDomainARecord: `${base}.destroy_domain_a_record.destroy_domain_A_record`,
  undeployDefaultApi: `${base}.undeploy_default_api.undeploy_default_api`,
  verifyCertificate: `${base}.verify_certificate.verify_certificate`,
} as const;
