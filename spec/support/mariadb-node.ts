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
      const until = Date.now() + 60_000;
      for (;;) {
        try {
          const c = await mysql.createConnection(adminAt(port));
          await c.end();
          return;
        } catch (err) {
          if (server.exitCode !== null || Date.now() > until) {
            throw new Error(`mariadbd on ${port} did not start (see ${path.join(dir, 'error.log')}): ${String(err)}`);
          }
          await new Promise((r) => setTimeout(r, 200));
        }
      }
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
