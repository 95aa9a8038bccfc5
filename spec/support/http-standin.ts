/**
 * What the HTTP stand-ins of spec/support/ share: a server on a free port of 127.0.0.1, the request body read whole,
 * JSON replies, and a close that ends every open connection (a client's keep-alive or a held stream) so that a test
 * never waits on one.
 */
import http from 'node:http';
import https from 'node:https';
import type net from 'node:net';

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void | Promise<void>;

export interface StandinServer {
  readonly server: http.Server;
  readonly port: number;
  /** `http://127.0.0.1:<port>`, or `https://…` when started with `tls`. */
  readonly origin: string;
  /** Ends every open connection and stops listening; a second call does nothing more. */
  readonly close: () => Promise<void>;
}

export interface StandinOptions {
  /** Serve HTTPS with this key and certificate. */
  readonly tls?: https.ServerOptions;
  /**
   * Answers a request whose handler threw, in the service's own error shape; by default a 500 whose text is the
   * error. Not called once the handler has begun its answer.
   */
  readonly onError?: (res: http.ServerResponse, err: unknown) => void;
}

/** Starts `handler` on a free port of 127.0.0.1. */
export async function startStandin(handler: Handler, options: StandinOptions = {}): Promise<StandinServer> {
  const onError = options.onError ?? ((res: http.ServerResponse, err: unknown) => res.writeHead(500).end(String(err)));
  const serve = (req: http.IncomingMessage, res: http.ServerResponse) => {
    Promise.resolve()
      .then(() => handler(req, res))
      .catch((err: unknown) => {
        if (!res.headersSent) onError(res, err);
      });
  };
  const server: http.Server = options.tls ? https.createServer(options.tls, serve) : http.createServer(serve);
  const sockets = new Set<net.Socket>();
  server.on('connection', (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  let closed: Promise<void> | undefined;
  return {
    server,
    port,
    origin: `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    close: () =>
      (closed ??= new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      })),
  };
}

/** The whole body of a request. */
export async function readBody(req: http.IncomingMessage): Promise<Buffer<ArrayBuffer>> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** The body as JSON: `undefined` when empty (or only white space); a body that is no JSON throws its SyntaxError. */
export async function readJson(req: http.IncomingMessage): Promise<unknown> {
  const text = (await readBody(req)).toString('utf8');
  return text.trim() === '' ? undefined : (JSON.parse(text) as unknown);
}

/** Answers `status` with `body` as JSON. */
export function replyJson(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}
