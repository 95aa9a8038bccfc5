/**
 * A first run on a fresh machine (`npm run system`): when the database host is this machine and Smarter's
 * database does not exist, create it with Smarter's tables (and the worker's own, tasks/db/once.ts) and a user
 * for the workers, as compose.yaml's MariaDB does. Never touches a database that exists, nor a remote server.
 */
import mysql from 'mysql2/promise';
import type { Logger } from '../../lib/logger.js';
import { ONCE_TABLE_DDL } from './once.js';
import { smarterSchema } from './schema.js';

export interface BootstrapConfig {
  host: string;
  port: number;
  database: string;
  user: string;
  password: string;
  /** An account that may create databases and users (MariaDB's default: root, no password over TCP). */
  admin: { user: string; password: string };
}

export type BootstrapOutcome = 'remote' | 'reachable' | 'created' | 'exists' | 'no-admin';

const LOCAL = new Set(['localhost', '127.0.0.1', '::1', '[::1]']);

export function isLocalHost(host: string): boolean {
  return LOCAL.has(host.trim().toLowerCase());
}

const ident = (name: string) => `\`${name.replace(/`/g, '``')}\``;

async function reachable(c: BootstrapConfig): Promise<boolean> {
  try {
    const conn = await mysql.createConnection({
      host: c.host,
      port: c.port,
      user: c.user,
      password: c.password,
      database: c.database,
    });
    await conn.end();
    return true;
  } catch {
    return false;
  }
}

export async function ensureLocalDatabase(c: BootstrapConfig, logger: Logger): Promise<BootstrapOutcome> {
  if (!isLocalHost(c.host)) return 'remote';
  if (await reachable(c)) return 'reachable';
  let admin: mysql.Connection;
  try {
    admin = await mysql.createConnection({
      host: c.host,
      port: c.port,
      user: c.admin.user,
      password: c.admin.password,
      multipleStatements: true,
    });
  } catch (err) {
    logger.warn(
      `database ${c.database} on ${c.host}:${c.port} is not reachable as ${c.user}, and ${c.admin.user} cannot connect to create it (${(err as Error).message}); set SMARTER_SYSTEM_DB_ADMIN_USER/_PASSWORD, or create it with tasks/db/schema.sql`,
    );
    return 'no-admin';
  }
  try {
    const [found] = await admin.query('SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?', [
      c.database,
    ]);
    if ((found as unknown[]).length > 0) {
      logger.warn(
        `database ${c.database} exists on ${c.host}:${c.port} but ${c.user} cannot use it; it is left as it is`,
      );
      return 'exists';
    }
    await admin.query(`CREATE DATABASE ${ident(c.database)} CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
    try {
      await admin.query(`USE ${ident(c.database)}; ${smarterSchema()}\n${ONCE_TABLE_DDL};`);
    } catch (err) {
      // Half a schema would pass for a database next time: take it away again.
      await admin.query(`DROP DATABASE ${ident(c.database)}`).catch(() => undefined);
      throw err;
    }
    for (const host of ['localhost', '127.0.0.1']) {
      await admin.query('CREATE USER IF NOT EXISTS ?@? IDENTIFIED BY ?', [c.user, host, c.password]);
      await admin.query(`GRANT ALL PRIVILEGES ON ${ident(c.database)}.* TO ?@?`, [c.user, host]);
    }
  } finally {
    await admin.end().catch(() => undefined);
  }
  logger.info(
    `created database ${c.database} on ${c.host}:${c.port} with Smarter's tables (tasks/db/schema.sql) for user ${c.user}`,
  );
  return 'created';
}
