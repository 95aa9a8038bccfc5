/** Smarter's llmhost task names (tasks in the package `__init__.py`, so no repeated module name). */
export const LLMHOST_TASK = {
  launch: 'smarter.apps.llmhost.tasks.launch_llmhost',
  destroy: 'smarter.apps.llmhost.tasks.destroy_llmhost',
  refresh: 'smarter.apps.llmhost.tasks.refresh_llmhost_status',
  reconcile: 'smarter.apps.llmhost.tasks.reconcile_llmhost_compute',
  reconcileAll: 'smarter.apps.llmhost.tasks.reconcile_llmhost_computes',
} as const;
