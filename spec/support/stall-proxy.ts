/**
 * A TCP proxy that can stall: after `stall(ms)` it stops reading from both sides of every connection, and of
 * every connection made meanwhile, and closes none, as a link that drops every packet without a reset does.
 * What each side writes waits in the socket buffers; when the stall ends the proxy reads again and forwards
 * it, as TCP does once a link heals, including what a side sent before it gave up and closed (its close is
 * forwarded after its data).
 */
import { startTcpProxy } from './tcp-proxy.js';

export interface StallProxy {
  port: number;
  /** Stops all traffic for `ms` (no reads, no closes), then forwards what waited and proxies normally again. */
  stall(ms: number): Promise<void>;
  /** Whether it is stalled now. */
  readonly stalled: boolean;
  close(): Promise<void>;
}

export async function startStallProxy(target: { host: string; port: number }): Promise<StallProxy> {
  let stalled = false;
  const proxy = await startTcpProxy(target, ({ client, server }) => {
    client.on('data', (d) => server.write(d));
    server.on('data', (d) => client.write(d));
    // A half-close is forwarded after the data before it, so what a side sent before closing still arrives.
    client.on('end', () => server.end());
    server.on('end', () => client.end());
    if (stalled) {
      client.pause();
      server.pause();
    }
  });
  return {
    port: proxy.port,
    get stalled() {
      return stalled;
    },
    async stall(ms) {
      stalled = true;
      for (const p of proxy.pairs) {
        p.client.pause();
        p.server.pause();
      }
      await new Promise((r) => setTimeout(r, ms));
      stalled = false;
      for (const p of [...proxy.pairs]) {
        p.client.resume();
        p.server.resume();
      }
    },
    close: () => proxy.close(),
  };
}
