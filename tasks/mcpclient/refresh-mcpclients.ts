/** `refresh_mcpclients()`: queues `refresh_mcpclient(id)` for every active MCPClient (Beat, hourly); returns how many. */
import { periodicTask } from '../env/periodic-task.js';
import type { TaskEnv } from '../env/task-env.js';
import { REFRESH_MCPCLIENT } from './refresh-mcpclient.js';
import { activeMcpclientIds } from './rows.js';

export const refreshMcpclients = (env: TaskEnv) =>
  periodicTask<number>({
    name: 'smarter.apps.mcpclient.tasks.refresh_mcpclients',
    queue: env.operationalQueue,
    async run(ctx) {
      const ids = await activeMcpclientIds(ctx.deps.db);
      // Positional, as Smarter's `refresh_mcpclient.delay(mcpclient_id)`.
      for (const id of ids) await ctx.applyAsync(REFRESH_MCPCLIENT, [id], {}, { queue: env.operationalQueue });
      ctx.logger.info('refresh_mcpclients: queued', { count: ids.length });
      return ids.length;
    },
  });
