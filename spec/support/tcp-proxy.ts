/**
 * What the fault tests' TCP proxies share: a listener on a free local port that opens one connection to the
 * target per client, keeps each pair until either side closes (then closes both), and can cut them all. How
 * bytes flow between the two sides is each proxy's own (`pipe`).
 */
import net from 'node:net';

export interface Pair {
  client: net.Socket;
  server: net.Socket;
}

export interface TcpProxy {
  port: number;
  /** The open pairs. */
  pairs: Set<Pair>;
  /** Cuts every open connection. */
  cutAll(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(
  target: { host: string; port: number },
  pipe: (pair: Pair) => void,
): Promise<TcpProxy> {
  const pairs = new Set<Pair>();
  const srv = net.createServer((client) => {
    const server = net.connect(target.port, target.host);
    const pair = { client, server };
    pairs.add(pair);
    pipe(pair);
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      server.destroy();
    };
    client.on('close', end).on('error', end);
    server.on('close', end).on('error', end);
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const cutAll = () => {
    for (const p of [...pairs]) {
      p.client.destroy();
      p.server.destroy();
    }
    pairs.clear();
  };
  return {
    port: (srv.address() as net.AddressInfo).port,
    pairs,
    cutAll,
    async close() {
      cutAll();
      await new Promise((r) => srv.close(r));
    },
  };
}
