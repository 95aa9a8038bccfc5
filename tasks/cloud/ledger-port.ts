/**
 * Where the tasks record the cloud resources they create or destroy, at the moments Smarter's infrastructure
 * services send their resource signals. The infrastructure app's `InfrastructureLedger` writes it; the cloud
 * room names only this port, so that it depends on no app.
 */
import type { KubeObject } from './kubernetes-port.js';

export interface ResourceLedger {
  zoneCreated(zone: { id: string; name: string }): Promise<void>;
  zoneDestroyed(zone: { id: string; name: string }): Promise<void>;
  recordCreated(zoneId: string, name: string, type: string): Promise<void>;
  recordDestroyed(zoneId: string, name: string, type: string): Promise<void>;
  certificateCreated(certificate: { arn: string; domain: string }): Promise<void>;
  certificateDestroyed(certificate: { arn: string; domain: string }): Promise<void>;
  kubernetesApplied(objects: readonly KubeObject[]): Promise<void>;
  kubernetesDeleted(kind: string, name: string): Promise<void>;
}
