/**
 * The five llmhost infrastructure tasks and the inventory task (smarter-contract.md §3.2), INFRA, no autoretry: a
 * failure is a FAILURE, and Beat's periodic refresh and reconcile are what try again.
 */
import type { AnyTask } from '../../lib/registry/define-task.js';
import type { InfraDeps } from '../infrastructure/env.js';
import { syncInfrastructureInventory } from '../inventory/sync-infrastructure-inventory.js';
import type { LlmhostEnv } from './env.js';
import { destroyLlmhost } from './destroy-llmhost.js';
import { launchLlmhost } from './launch-llmhost.js';
import { reconcileLlmhostCompute } from './reconcile-llmhost-compute.js';
import { reconcileLlmhostComputes } from './reconcile-llmhost-computes.js';
import { refreshLlmhostStatus } from './refresh-llmhost-status.js';

export function llmhostTasks(env: LlmhostEnv): AnyTask<InfraDeps>[] {
  return [launchLlmhost(env), destroyLlmhost(env), refreshLlmhostStatus(env), reconcileLlmhostCompute(env), reconcileLlmhostComputes(env), syncInfrastructureInventory(env)];
}
