/**
 * A TCP proxy that can lose replies: after `swallow()`, what the client sends still reaches the server (so
 * its commands run), but nothing comes back, and after `ms` every connection is cut. That is the moment a
 * broker restart or a network cut can hit: a command done by the server whose reply the client never read.
 */
import net from 'node:net';

export interface ReplyCutProxy {
  port: number;
  /** Drops every reply from now on, cuts all connections after `ms`, then proxies normally again. */
  swallow(ms: number): Promise<void>;
  close(): Promise<void>;
}

export async function startReplyCutProxy(target: { host: string; port: number }): Promise<ReplyCutProxy> {
  const pairs = new Set<{ client: net.Socket; server: net.Socket }>();
  let swallowing = false;
  const srv = net.createServer((client) => {
    const server = net.connect(target.port, target.host);
    const pair = { client, server };
    pairs.add(pair);
    client.on('data', (d) => server.write(d));
    server.on('data', (d) => {
      if (!swallowing) client.write(d);
    });
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      server.destroy();
    };
    client.on('close', end).on('error', end);
    server.on('close', end).on('error', end);
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  return {
    port: (srv.address() as net.AddressInfo).port,
    async swallow(ms) {
      swallowing = true;
      await new Promise((r) => setTimeout(r, ms));
      for (const p of [...pairs]) {
        p.client.destroy();
        p.server.destroy();
      }
      pairs.clear();
      swallowing = false;
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
