/**
 * Smarter's `llmhost` app: five infrastructure tasks, no autoretry (a failure is a FAILURE, and Beat's periodic
 * refresh and reconcile are what try again), and `charge_llmhost_computes` on the operational queue.
 */
import type { AnyTask } from '../../lib/registry/define-task.js';
import type { SmarterDeps, TaskEnv } from '../env/task-env.js';
import { chargeLlmhostComputes } from './charge-llmhost-computes.js';
import { destroyLlmhost } from './destroy-llmhost.js';
import { launchLlmhost } from './launch-llmhost.js';
import { reconcileLlmhostCompute } from './reconcile-llmhost-compute.js';
import { reconcileLlmhostComputes } from './reconcile-llmhost-computes.js';
import { refreshLlmhostStatus } from './refresh-llmhost-status.js';

export function llmhostTasks(env: TaskEnv): AnyTask<SmarterDeps>[] {
  return [
    chargeLlmhostComputes(env),
    launchLlmhost(env),
    destroyLlmhost(env),
    refreshLlmhostStatus(env),
    reconcileLlmhostCompute(env),
    reconcileLlmhostComputes(env),
  ];
}
