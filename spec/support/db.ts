/** A fresh MariaDB database per test file, with Smarter's Django tables, dropped afterwards. */
import mysql from 'mysql2/promise';
import { type Database, type DatabaseConfig, openDatabase } from '../../tasks/db/database.js';
import { smarterSchema } from '../../tasks/db/schema.js';
import { uniqueName } from './amqp.js';
import { insertRow } from './django-rows.js';
import { waitFor } from './wait.js';

export const MYSQL: Omit<DatabaseConfig, 'database'> = {
  host: process.env.SMARTER_MYSQL_HOST ?? '127.0.0.1',
  port: Number(process.env.SMARTER_MYSQL_PORT ?? 3306),
  user: process.env.SMARTER_MYSQL_USER ?? 'root',
  password: process.env.SMARTER_MYSQL_PASSWORD ?? '',
  poolSize: 8,
};

/** A single admin connection takes no pool size. */
const { poolSize: _pool, ...ADMIN } = MYSQL;

const SCHEMA = smarterSchema();

export interface TestDatabase {
  name: string;
  config: DatabaseConfig;
  db: Database;
  drop(): Promise<void>;
}

/**
 * Smarter's database refuses a row that leaves out a NOT NULL column only in strict SQL mode (MariaDB's default,
 * and what Django's check mysql.W002 asks for). Django sets no sql_mode: the workers the tests start, like the
 * pool here, take the server's. So the tests stop on a server that is not strict rather than pass rows that
 * Smarter's database refuses.
 */
async function assertStrict(admin: mysql.Connection): Promise<void> {
  const [rows] = await admin.query<mysql.RowDataPacket[]>('SELECT @@GLOBAL.sql_mode AS mode');
  const mode = String(rows[0]?.mode ?? '');
  if (!/\bSTRICT_(TRANS|ALL)_TABLES\b/.test(mode)) {
    throw new Error(
      `the MariaDB server at ${ADMIN.host}:${ADMIN.port} runs with sql_mode '${mode}', without STRICT_TRANS_TABLES (MariaDB's default); set it back (SET GLOBAL sql_mode = CONCAT(@@GLOBAL.sql_mode, ',STRICT_TRANS_TABLES'))`,
    );
  }
}

export async function createTestDatabase(prefix = 'sw'): Promise<TestDatabase> {
  const name = uniqueName(`${prefix}_db`)
    .replace(/[^A-Za-z0-9_]/g, '_')
    .slice(0, 60);
  const admin = await mysql.createConnection({ ...ADMIN, multipleStatements: true });
  await assertStrict(admin);
  await admin.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
  await admin.query(`USE \`${name}\`; ${SCHEMA}`);
  await admin.end();
  const config = { ...MYSQL, database: name };
  const db = openDatabase(config);
  return {
    name,
    config,
    db,
    async drop() {
      await db.close();
      const a = await mysql.createConnection(ADMIN);
      await a.query(`DROP DATABASE IF EXISTS \`${name}\``);
      await a.end();
    },
  };
}

/** Fixtures: a user with a profile and an account, an LLMClient, a prompt, a plugin with its selector. */
export async function seed(db: Database): Promise<{
  userId: number;
  profileId: number;
  accountId: number;
  llmclientId: number;
  promptId: number;
  pluginId: number;
  selectorId: number;
}> {
  const u = await db.execute("INSERT INTO auth_user (username) VALUES (CONCAT('user', UUID_SHORT()))");
  const a = await db.execute(
    "INSERT INTO account_account (account_number, created_at, updated_at) VALUES (CONCAT('3141-', UUID_SHORT()), UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))",
  );
  const p = await db.execute(
    'INSERT INTO account_userprofile (user_id, account_id, created_at, updated_at) VALUES (?, ?, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))',
    [u.insertId, a.insertId],
  );
  const tag = Math.random().toString(36).slice(2, 10);
  const l = {
    insertId: await insertRow(db, 'llmclient_llmclient', { name: `bot${tag}`, user_profile_id: p.insertId }),
  };
  const pr = {
    insertId: await insertRow(db, 'prompt_prompt', {
      session_key: `sk${tag}`,
      llmclient_id: l.insertId,
      user_profile_id: p.insertId,
      ip_address: '127.0.0.1',
      user_agent: 'jest',
      url: 'https://example.com/chat',
    }),
  };
  const pm = await db.execute("INSERT INTO plugin_pluginmeta (name, account_id) VALUES ('weather', ?)", [a.insertId]);
  const ps = await db.execute(
    "INSERT INTO plugin_pluginselector (directive, search_terms, plugin_id) VALUES ('search_terms', '[\"weather\"]', ?)",
    [pm.insertId],
  );
  return {
    userId: u.insertId,
    profileId: p.insertId,
    accountId: a.insertId,
    llmclientId: l.insertId,
    promptId: pr.insertId,
    pluginId: pm.insertId,
    selectorId: ps.insertId,
  };
}

/** Waits until `sql` selects a row (polling every `stepMs`), and answers the first. */
export const untilRow = (db: Database, sql: string, params: unknown[], timeoutMs: number, stepMs = 50) =>
  waitFor(async () => (await db.select(sql, params))[0], timeoutMs, stepMs);
