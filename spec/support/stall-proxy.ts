/**
 * A TCP proxy that can stall: after `stall(ms)` it stops reading from both sides of every connection, and of
 * every connection made meanwhile, and closes none, as a link that drops every packet without a reset does.
 * What each side writes waits in the socket buffers; when the stall ends the proxy reads again and forwards
 * it, as TCP does once a link heals, including what a side sent before it gave up and closed (its close is
 * forwarded after its data).
 */
import net from 'node:net';

export interface StallProxy {
  port: number;
  /** Stops all traffic for `ms` (no reads, no closes), then forwards what waited and proxies normally again. */
  stall(ms: number): Promise<void>;
  /** Whether it is stalled now. */
  readonly stalled: boolean;
  close(): Promise<void>;
}

interface Pair {
  client: net.Socket;
  server: net.Socket;
}

export async function startStallProxy(target: { host: string; port: number }): Promise<StallProxy> {
  const pairs = new Set<Pair>();
  let stalled = false;
  const srv = net.createServer((client) => {
    const server = net.connect(target.port, target.host);
    const pair = { client, server };
    pairs.add(pair);
    client.on('data', (d) => server.write(d));
    server.on('data', (d) => client.write(d));
    // A half-close is forwarded after the data before it, so what a side sent before closing still arrives.
    client.on('end', () => server.end());
    server.on('end', () => client.end());
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      server.destroy();
    };
    client.on('close', end).on('error', end);
    server.on('close', end).on('error', end);
    if (stalled) {
      client.pause();
      server.pause();
    }
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  return {
    port: (srv.address() as net.AddressInfo).port,
    get stalled() {
      return stalled;
    },
    async stall(ms) {
      stalled = true;
      for (const p of pairs) {
        p.client.pause();
        p.server.pause();
      }
      await new Promise((r) => setTimeout(r, ms));
      stalled = false;
      for (const p of [...pairs]) {
        p.client.resume();
        p.server.resume();
      }
    },
    async close() {
      for (const p of pairs) {
        p.client.destroy();
        p.server.destroy();
      }
      await new Promise((r) => srv.close(r));
    },
  };
}
