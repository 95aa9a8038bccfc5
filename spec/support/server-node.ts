/**
 * A server process of a test's own (redis-node.ts, mariadb-node.ts): a temporary directory and a free port,
 * started and waited for until it serves, stopped cleanly (SIGTERM, waited for) and started again on the
 * same port and data, removed with its directory at the end. The shared servers are never touched.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { terminate } from './child.js';
import { freePort } from './rabbit-node.js';

export interface ServerNode {
  readonly port: number;
  /** Its temporary directory (data, socket, logs). */
  readonly dir: string;
  /** Starts it again on the same port and data, once it serves. */
  start(): Promise<void>;
  /** A clean shutdown (SIGTERM), waited for. */
  stop(): Promise<void>;
  /** Stops it and removes its directory. */
  remove(): Promise<void>;
}

export interface ServerNodeSpec {
  /** Prefix of its temporary directory's name. */
  name: string;
  /** Once, before it first starts (initialise a data directory). */
  prepare?(dir: string, port: number): Promise<void>;
  launch(dir: string, port: number): ChildProcess;
  /** Resolves once `server` serves; throws when it will not (it exited, or took too long). */
  ready(server: ChildProcess, port: number, dir: string): Promise<void>;
}

/** Starts the server and resolves once it serves. */
export async function startServerNode(spec: ServerNodeSpec): Promise<ServerNode> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `${spec.name}-`));
  const port = await freePort();
  await spec.prepare?.(dir, port);
  let server: ChildProcess | undefined;
  const start = async (): Promise<void> => {
    const s = spec.launch(dir, port);
    server = s;
    await spec.ready(s, port, dir);
  };
  const stop = async (): Promise<void> => {
    const s = server;
    server = undefined;
    await terminate(s);
  };
  await start();
  return {
    port,
    dir,
    start,
    stop,
    async remove() {
      await stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
