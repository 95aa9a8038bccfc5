/**
 * Smarter's settings of a platform named "alpha" at example.com, as the llmclient and llmhost tests run it:
 * Smarter's queue names and retry policy (3 retries with backoff), unless a test gives queues of its own.
 */
export function alphaSettings(queues: { operationalQueue?: string; infrastructureQueue?: string } = {}) {
  return {
    operationalQueue: queues.operationalQueue ?? 'default_celery_task_queue',
    infrastructureQueue: queues.infrastructureQueue ?? 'infrastructure_celery_task_queue',
    maxRetries: 3,
    retryBackoff: true,
    environment: 'alpha',
    rootDomain: 'example.com',
  };
}
