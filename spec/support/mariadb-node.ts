/**
 * A MariaDB server of the test's own (mariadb-install-db into a temporary data directory, mariadbd on a free
 * port and its own socket, root without a password on 127.0.0.1), so that a test may stop and start it without
 * touching the shared server on 3306. `--no-defaults` keeps the machine's my.cnf (user, log paths) out of it.
 */
import { execFile, spawn } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import mysql from 'mysql2/promise';
import type { DatabaseConfig } from '../../tasks/db/database.js';
import { smarterSchema } from '../../tasks/db/schema.js';
import { type ServerNode, startServerNode } from './server-node.js';
import { waitFor } from './wait.js';

const run = promisify(execFile);

export interface MariaNode extends ServerNode {
  /** root on 127.0.0.1:<port>, no database selected. */
  readonly admin: Omit<DatabaseConfig, 'database' | 'poolSize'>;
  /** Creates a database with Smarter's tables (tasks/db/schema.sql); returns its name. */
  createDatabase(name: string): Promise<string>;
}

const adminAt = (port: number) => ({ host: '127.0.0.1', port, user: 'root', password: '' });

export async function startMariaNode(): Promise<MariaNode> {
  const node = await startServerNode({
    name: 'mariadb-node',
    async prepare(dir) {
      await run(
        'mariadb-install-db',
        [
          '--no-defaults',
          `--datadir=${path.join(dir, 'data')}`,
          '--user=root',
          '--auth-root-authentication-method=normal',
          '--skip-test-db',
        ],
        { timeout: 120_000 },
      );
    },
    launch: (dir, port) =>
      spawn(
        'mariadbd',
        [
          '--no-defaults',
          `--datadir=${path.join(dir, 'data')}`,
          `--port=${port}`,
          '--bind-address=127.0.0.1',
          `--socket=${path.join(dir, 's')}`,
          '--user=root',
          `--pid-file=${path.join(dir, 'pid')}`,
          `--log-error=${path.join(dir, 'error.log')}`,
          '--innodb-buffer-pool-size=32M',
          '--skip-log-bin',
        ],
        { stdio: 'ignore' },
      ),
    async ready(server, port, dir) {
      let last: unknown;
      const what = () => `mariadbd on ${port} to start (see ${path.join(dir, 'error.log')}; last: ${String(last)})`;
      await waitFor(
        async () => {
          if (server.exitCode !== null) throw new Error(`${what()}: it exited`);
          try {
            await (await mysql.createConnection(adminAt(port))).end();
            return true;
          } catch (err) {
            last = err;
            return false;
          }
        },
        60_000,
        { stepMs: 200, what },
      );
    },
  });
  const admin = adminAt(node.port);
  return Object.assign(node, {
    admin,
    async createDatabase(name: string) {
      const c = await mysql.createConnection({ ...admin, multipleStatements: true });
      try {
        await c.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
        await c.query(`USE \`${name}\`; ${smarterSchema()}`);
      } finally {
        await c.end();
      }
      return name;
    },
  });
}
