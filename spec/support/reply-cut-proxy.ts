/**
 * A TCP proxy that can lose replies: after `swallow()`, what the client sends still reaches the server (so
 * its commands run), but nothing comes back, and after `ms` every connection is cut. That is the moment a
 * broker restart or a network cut can hit: a command done by the server whose reply the client never read.
 */
import { startTcpProxy } from './tcp-proxy.js';

export interface ReplyCutProxy {
  port: number;
  /** Drops every reply from now on, cuts all connections after `ms`, then proxies normally again. */
  swallow(ms: number): Promise<void>;
  close(): Promise<void>;
}

export async function startReplyCutProxy(target: { host: string; port: number }): Promise<ReplyCutProxy> {
  let swallowing = false;
  const proxy = await startTcpProxy(target, ({ client, server }) => {
    client.on('data', (d) => server.write(d));
    server.on('data', (d) => {
      if (!swallowing) client.write(d);
    });
  });
  return {
    port: proxy.port,
    async swallow(ms) {
      swallowing = true;
      await new Promise((r) => setTimeout(r, ms));
      proxy.cutAll();
      swallowing = false;
    },
    close: () => proxy.close(),
  };
}
