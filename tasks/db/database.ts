/**
 * Smarter's database (MariaDB/MySQL) through one mysql2 pool. The tasks write Django's tables directly, so
 * the pool is set up to read and write what Django does: DECIMAL and BIGINT values as exact strings,
 * DATETIME(6) as UTC text (never through a local-time JS Date; SQL uses UTC_TIMESTAMP(6), not NOW()).
 */
import type { Pool, PoolConnection, ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import { toDatabaseError } from '../errors.js';

export interface DatabaseConfig {
  host: string;
  port: number;
  database: string;
  user: string;
  password: string;
  poolSize: number;
}

/** With this pool's options a cell is text (DECIMAL, BIGINT, DATETIME, JSON), a number (INT) or NULL. */
export type Cell = string | number | null;
export type Row = Record<string, Cell>;
export type Params = ReadonlyArray<unknown>;

/** What the tasks need of a database: a query, and a transaction that is committed or rolled back whole. */
export interface Queryable {
  select(sql: string, params?: Params): Promise<Row[]>;
  execute(sql: string, params?: Params): Promise<{ affectedRows: number; insertId: number }>;
}

export interface Database extends Queryable {
  /** READ COMMITTED takes no gap locks, so a long transaction does not block concurrent INSERTs. */
  transaction<T>(
    fn: (tx: Queryable) => Promise<T>,
    options?: { isolation?: 'READ COMMITTED' | 'REPEATABLE READ' },
  ): Promise<T>;
  close(): Promise<void>;
}

function wrap(conn: Pool | PoolConnection): Queryable {
  return {
    async select(sql, params = []) {
      try {
        const [rows] = await conn.query<RowDataPacket[]>(sql, params as unknown[]);
        return rows;
      } catch (err) {
        throw toDatabaseError(err);
      }
    },
    async execute(sql, params = []) {
      try {
        const [res] = await conn.query<ResultSetHeader>(sql, params as unknown[]);
        return { affectedRows: res.affectedRows, insertId: Number(res.insertId) };
      } catch (err) {
        throw toDatabaseError(err);
      }
    },
  };
}

/** The pool, and mysql2 itself, are made on the first query: a worker that never queries never loads them. */
/** Smarter's database settings, under the names `SMARTER_MYSQL_*` load them (tasks/settings.ts). */
export interface MysqlSettings {
  mysqlHost: string;
  mysqlPort: number;
  mysqlDatabase: string;
  mysqlUser: string;
  mysqlPassword: string;
}

/** The pool of Smarter's database, from its settings. */
export const openSmarterDatabase = (s: MysqlSettings, poolSize: number): Database =>
  openDatabase({
    host: s.mysqlHost,
    port: s.mysqlPort,
    database: s.mysqlDatabase,
    user: s.mysqlUser,
    password: s.mysqlPassword,
    poolSize,
  });

export function openDatabase(config: DatabaseConfig): Database {
  let made: Promise<Pool> | undefined;
  const pool = () => (made ??= createPool(config));
  const q: Queryable = {
    select: async (sql, params) => wrap(await pool()).select(sql, params),
    execute: async (sql, params) => wrap(await pool()).execute(sql, params),
  };
  return {
    ...q,
    async transaction(fn, options = {}) {
      const conn = await (await pool()).getConnection().catch((err: unknown) => {
        throw toDatabaseError(err);
      });
      try {
        if (options.isolation) await conn.query(`SET TRANSACTION ISOLATION LEVEL ${options.isolation}`);
        await conn.beginTransaction();
        const result = await fn(wrap(conn));
        await conn.commit();
        return result;
      } catch (err) {
        await conn.rollback().catch(() => undefined);
        throw err;
      } finally {
        conn.release();
      }
    },
    close: async () => {
      if (made) await (await made).end();
    },
  };
}

async function createPool(config: DatabaseConfig): Promise<Pool> {
  const { default: mysql } = await import('mysql2/promise');
  return mysql.createPool({
    host: config.host,
    port: config.port,
    database: config.database,
    user: config.user,
    password: config.password,
    connectionLimit: config.poolSize,
    charset: 'utf8mb4',
    timezone: 'Z',
    dateStrings: true,
    jsonStrings: true,
    decimalNumbers: false,
    supportBigNumbers: true,
    bigNumberStrings: true,
    enableKeepAlive: true,
  });
}
