/**
 * `refresh_mcpclient(mcpclient_id)` (`mcpclient/tasks/__init__.py`): connects to the MCPClient's MCP server,
 * lists its tools, and records the outcome on the row; returns the MCPClient's status, or None when there is no
 * such MCPClient. As in Smarter, only a connection failure (a server that is down, refuses the credential,
 * answers an error or is too slow) is recorded, as `error` with `last_error`, and the task succeeds: "the tasks
 * do not retry". A configuration error (no endpoint URL, no credential in the Secret, an unsupported transport)
 * is logged and the row left as it is, its status returned. A Secret that cannot be decrypted fails the task
 * with SmarterValueError, as `Secret.get_secret` fails Smarter's task; so does the database failing.
 *
 * Smarter also puts the catalog in Django's cache for `cache_ttl` seconds (pickled, in Smarter's cache
 * backend); this worker does not write Django's cache, so the web app's next read discovers afresh.
 */
import * as z from 'zod';
import { defineTask } from '../../lib/registry/define-task.js';
import { McpConnectionError, type McpTransport } from '../cloud/mcp-port.js';
import type { SmarterDeps, TaskEnv } from '../env/task-env.js';
import { pk } from '../db/django.js';
import { readSecret } from '../secret/rows.js';
import { AUTH, MCP_STATUS, type McpClientRow, loadMcpClient, recordConnected, recordError } from './rows.js';

export const REFRESH_MCPCLIENT = 'smarter.apps.mcpclient.tasks.refresh_mcpclient';
export const USER_AGENT = 'Smarter/smarter-worker MCPClient (+https://smarter.sh)';

/** Smarter's `SmarterMCPClientConfigurationError`: the row itself is unusable. */
class ConfigurationError extends Error {}

export const refreshMcpclient = (env: TaskEnv) =>
  defineTask<{ mcpclient_id: number }, string | null, SmarterDeps>({
    name: REFRESH_MCPCLIENT,
    queue: env.operationalQueue,
    params: z.strictObject({ mcpclient_id: pk() }),
    async run(p, ctx) {
      const { db } = ctx.deps;
      const row = await loadMcpClient(db, p.mcpclient_id);
      if (row === null) {
        ctx.logger.warn('refresh_mcpclient: MCPClient does not exist', { mcpclient_id: p.mcpclient_id });
        return null;
      }
      try {
        const target = await targetOf(row, ctx.deps, env.fernetEncryptionKey);
        const catalog = await ctx.deps.cloud.mcp.discover(target);
        await recordConnected(db, row, catalog);
        ctx.logger.info('refresh_mcpclient: connected', {
          mcpclient: row.name,
          server: catalog.serverName,
          tools: catalog.tools.length,
        });
        return MCP_STATUS.CONNECTED;
      } catch (e) {
        if (e instanceof ConfigurationError) {
          ctx.logger.warn('refresh_mcpclient: could not connect', { mcpclient: row.name, error: e.message });
          return row.status;
        }
        if (!(e instanceof McpConnectionError)) throw e;
        const message = `MCPClient ${row.name} could not list its tools: ${e.detail}`;
        await recordError(db, row.id, message);
        ctx.logger.warn('refresh_mcpclient: could not connect', { mcpclient: row.name, error: message });
        return MCP_STATUS.ERROR;
      }
    },
  });

const isTransport = (t: string): t is McpTransport => t === 'http' || t === 'sse';

/** Checked in Smarter's order (`MCPServerConnection.run`): the endpoint, the credential, then the transport. */
async function targetOf(row: McpClientRow, deps: SmarterDeps, key: string) {
  if (row.endpointUrl === null) throw new ConfigurationError(`MCPClient ${row.name} has no endpointUrl.`);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(row.headers)) headers[k] = typeof v === 'string' ? v : JSON.stringify(v);
  headers['User-Agent'] = USER_AGENT;
  const credential = async () => {
    // An undecryptable Secret throws SecretError (Smarter's SmarterValueError), which fails the task.
    const value = row.credentialsId === null ? null : await readSecret(deps.db, key, row.credentialsId, true);
    if (!value) {
      throw new ConfigurationError(`MCPClient ${row.name} requires a credentials Secret for authType ${row.authType}.`);
    }
    return value;
  };
  if (row.authType === AUTH.API_KEY) headers[row.apiKeyHeader || 'X-API-Key'] = await credential();
  else if (row.authType === AUTH.BEARER_TOKEN || row.authType === AUTH.OAUTH2) {
    headers.Authorization = `Bearer ${await credential()}`;
  }
  const transport = row.transport ?? 'http';
  if (!isTransport(transport)) {
    throw new ConfigurationError(`MCPClient ${row.name}: transport ${transport} is not supported.`);
  }
  return { url: row.endpointUrl, transport, headers, timeoutSeconds: row.timeout };
}
