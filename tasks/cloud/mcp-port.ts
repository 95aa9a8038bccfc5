/**
 * MCP servers, as Smarter's MCPClient reaches them (`mcpclient/connection.py`): Streamable HTTP or the legacy
 * SSE transport (stdio is refused, as Smarter refuses it), credentials sent only as HTTP headers, one
 * connection per operation: connect, handshake, operate, close.
 */
import { PythonException } from '../../lib/errors.js';

export type McpTransport = 'http' | 'sse';

export interface McpTarget {
  url: string;
  transport: McpTransport;
  /** The MCPClient's own headers, User-Agent and the credential header, already merged. */
  headers: Record<string, string>;
  /** Connect and respond within this (the MCPClient's `timeout`). */
  timeoutSeconds: number;
}

export interface McpTool {
  name: string;
  description: string;
  title: string | null;
  inputSchema: Record<string, unknown>;
  readOnly: boolean | null;
  destructive: boolean | null;
}

/** What the handshake and tools/list reported (Smarter's `MCPServerCatalog`). */
export interface McpCatalog {
  protocolVersion: string | null;
  serverName: string | null;
  serverVersion: string | null;
  instructions: string | null;
  hasTools: boolean;
  hasResources: boolean;
  tools: McpTool[];
}

export interface McpServers {
  /** Connects, lists every tool (paged, at most 10 pages and 500 tools, as Smarter), and disconnects. */
  discover(target: McpTarget): Promise<McpCatalog>;
}

/**
 * A server that cannot be reached, fails the handshake, answers an error, or is too slow. Python sees
 * Smarter's `SmarterMCPClientConnectionError`; the message names the endpoint and what was being done.
 */
export class McpConnectionError extends PythonException {
  constructor(
    readonly url: string,
    readonly verb: string,
    readonly detail: string,
  ) {
    super('SmarterMCPClientConnectionError', 'smarter.apps.mcpclient.exceptions', `MCP ${verb} ${url}: ${detail}`);
  }
}
