/** The five llmhost infrastructure tasks and the inventory task (smarter-contract.md §3.2), INFRA, no autoretry. */
import type { AnyTask } from '../../lib/registry/define-task.js';
import type { InfraDeps } from '../infrastructure/env.js';
import { syncInfrastructureInventory } from '../inventory/sync-infrastructure-inventory.js';
import type { LlmhostEnv } from './env.js';
import { destroyLlmhost, launchLlmhost, reconcileLlmhostCompute, reconcileLlmhostComputes, refreshLlmhostStatus } from './tasks.js';

export function llmhostTasks(env: LlmhostEnv): AnyTask<InfraDeps>[] {
  return [launchLlmhost(env), destroyLlmhost(env), refreshLlmhostStatus(env), reconcileLlmhostCompute(env), reconcileLlmhostComputes(env), syncInfrastructureInventory(env)];
}
