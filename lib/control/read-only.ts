/**
 * The prologue of every HTTP endpoint of ours (the worker's, Beat's): they only report, so only GET and HEAD
 * on their own paths are answered; another path is 404, another method 405 with `Allow`.
 */
import type http from 'node:http';

export type Send = (code: number, body: string, type?: string, extra?: Record<string, string>) => void;

/** The request's path and a reply function, or null when it was already refused. */
export function readOnly(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  paths: ReadonlySet<string>,
): { path: string; send: Send } | null {
  const send: Send = (code, body, type = 'text/plain; charset=utf-8', extra = {}) => {
    res.writeHead(code, { 'content-type': type, ...extra });
    // HEAD: the status and headers of a GET, no body (node drops it, but say so).
    res.end(req.method === 'HEAD' ? undefined : body);
  };
  const path = (req.url ?? '/').split('?')[0] ?? '/';
  if (!paths.has(path)) {
    send(404, 'not found\n');
    return null;
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    send(405, 'method not allowed\n', undefined, { allow: 'GET, HEAD' });
    return null;
  }
  return { path, send };
}
