/**
 * The MCPClient row (`mcpclient_mcpclient`, migrations 0001 + 0002) and what a refresh records on it. Status
 * strings are Smarter's `MCPConnectionStatus` values; `tools` holds the names offered to the LLM (the server's
 * tools that `allowed_tools` admits) as of the last successful connection, so a failure leaves it as it was.
 */
import type { Queryable } from '../db/database.js';
import { NOW, djangoJson } from '../db/django.js';
import type { McpCatalog } from '../cloud/mcp-port.js';
import { json, num, numOrNull, str, strOrNull } from '../db/columns.js';

export const MCP_STATUS = {
  UNCONFIGURED: 'unconfigured',
  CONNECTED: 'connected',
  DISCONNECTED: 'disconnected',
  ERROR: 'error',
} as const;
export const AUTH = { NONE: 'none', API_KEY: 'api_key', OAUTH2: 'oauth2', BEARER_TOKEN: 'bearer_token' } as const;

export interface McpClientRow {
  id: number;
  name: string;
  status: string;
  transport: string | null;
  endpointUrl: string | null;
  authType: string;
  credentialsId: number | null;
  apiKeyHeader: string;
  headers: Record<string, unknown>;
  timeout: number;
  allowedTools: string[];
}

/** Invalid JSON in `headers` or `allowed_tools` reads as null (then no headers, no tools) rather than failing the task. */
function jsonOrNull(c: Parameters<typeof json>[0]): unknown {
  try {
    return json(c);
  } catch {
    return null;
  }
}

export async function loadMcpClient(db: Queryable, id: number): Promise<McpClientRow | null> {
  const [r] = await db.select(
    'SELECT id, name, status, transport, endpoint_url, auth_type, credentials_id, api_key_header, headers, timeout, allowed_tools FROM mcpclient_mcpclient WHERE id = ?',
    [id],
  );
  if (!r) return null;
  const headers = jsonOrNull(r.headers);
  const allowed = jsonOrNull(r.allowed_tools);
  return {
    id: num(r.id),
    name: str(r.name),
    status: strOrNull(r.status) ?? MCP_STATUS.UNCONFIGURED,
    transport: strOrNull(r.transport),
    endpointUrl: strOrNull(r.endpoint_url) || null,
    authType: strOrNull(r.auth_type) ?? AUTH.NONE,
    credentialsId: numOrNull(r.credentials_id),
    apiKeyHeader: str(r.api_key_header),
    headers:
      headers !== null && typeof headers === 'object' && !Array.isArray(headers)
        ? (headers as Record<string, unknown>)
        : {},
    timeout: num(r.timeout) || 30,
    allowedTools: Array.isArray(allowed) ? allowed.map(String) : [],
  };
}

/** Python's `fnmatch.fnmatchcase`: `*`, `?`, `[seq]`, `[!seq]`, case-sensitive. */
export function globMatch(value: string, pattern: string): boolean {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] ?? '';
    if (c === '*') re += '[\\s\\S]*';
    else if (c === '?') re += '[\\s\\S]';
    else if (c === '[') {
      const end = pattern.indexOf(']', i + 2);
      if (end < 0) re += '\\[';
      else {
        let set = pattern.slice(i + 1, end).replace(/\\/g, '\\\\');
        if (set.startsWith('!')) set = `^${set.slice(1)}`;
        re += `[${set}]`;
        i = end;
      }
    } else re += c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  return new RegExp(`^${re}$`).test(value);
}

export const isToolAllowed = (row: McpClientRow, tool: string) =>
  row.allowedTools.length === 0 || row.allowedTools.some((p) => globMatch(tool, p));

/** Python's `text[:n]`: the first `n` code points (a JS slice counts UTF-16 units and could split a pair). */
export function pyPrefix(text: string, n: number): string {
  return text.length <= n ? text : Array.from(text).slice(0, n).join('');
}

/** Python's `(value or "")[:n] or None`. */
const cut = (value: string | null, n: number) => (value ? pyPrefix(value, n) : null);

/*
 * Both writes are Smarter's queryset `.update()` (`mcpclient/caching.py` `record_connection` and
 * `record_connection_failure`): a status change, not a configuration change, so `updated_at` stays as it is.
 */
export async function recordConnected(db: Queryable, row: McpClientRow, catalog: McpCatalog): Promise<void> {
  const offered = catalog.tools.map((t) => t.name).filter((n) => isToolAllowed(row, n));
  await db.execute(
    `UPDATE mcpclient_mcpclient
        SET status = ?, protocol_version = ?, server_name = ?, server_version = ?, tools = ?, last_error = NULL,
            last_connected_at = ${NOW}
      WHERE id = ?`,
    [
      MCP_STATUS.CONNECTED,
      cut(catalog.protocolVersion, 16),
      cut(catalog.serverName, 255),
      cut(catalog.serverVersion, 64),
      djangoJson(offered),
      row.id,
    ],
  );
}

export async function recordError(db: Queryable, id: number, message: string): Promise<void> {
  await db.execute('UPDATE mcpclient_mcpclient SET status = ?, last_error = ? WHERE id = ?', [
    MCP_STATUS.ERROR,
    pyPrefix(message, 2000),
    id,
  ]);
}

/** The active MCPClients' ids, in order. */
export async function activeMcpclientIds(db: Queryable): Promise<number[]> {
  const rows = await db.select('SELECT id FROM mcpclient_mcpclient WHERE is_active = 1 ORDER BY id');
  return rows.map((r) => num(r.id));
}
