/**
 * The first run's bootstrap (tasks/db/bootstrap.ts): a missing local database is created with Smarter's tables
 * and the worker's own marker table (tasks/db/once.ts), and a user for the workers.
 */
import { randomUUID } from 'node:crypto';
import mysql from 'mysql2/promise';
import { nullLogger } from '../../lib/logger.js';
import { ensureLocalDatabase } from '../../tasks/db/bootstrap.js';
import { ONCE_TABLE } from '../../tasks/db/once.js';
import { uniqueName } from '../support/amqp.js';
import { MYSQL } from '../support/db.js';

const { poolSize: _pool, ...ADMIN } = MYSQL;

test("a missing local database is created with Smarter's tables, the worker's marker table, and a user that can use them", async () => {
  const database = uniqueName('boot')
    .replace(/[^A-Za-z0-9_]/g, '_')
    .slice(0, 60);
  const user = uniqueName('swboot')
    .replace(/[^A-Za-z0-9_]/g, '_')
    .slice(0, 32);
  const password = randomUUID();
  const admin = await mysql.createConnection(ADMIN);
  try {
    const config = {
      host: '127.0.0.1',
      port: MYSQL.port,
      database,
      user,
      password,
      admin: { user: ADMIN.user, password: ADMIN.password },
    };
    await expect(ensureLocalDatabase(config, nullLogger())).resolves.toBe('created');
    const c = await mysql.createConnection({ host: '127.0.0.1', port: MYSQL.port, user, password, database });
    try {
      const [tables] = await c.query<mysql.RowDataPacket[]>(
        'SELECT table_name AS t FROM information_schema.tables WHERE table_schema = ?',
        [database],
      );
      const names = tables.map((r) => String(r.t));
      expect(names).toEqual(expect.arrayContaining(['account_charge', ONCE_TABLE]));
    } finally {
      await c.end();
    }
    await expect(ensureLocalDatabase(config, nullLogger())).resolves.toBe('reachable');
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS \`${database}\``);
    for (const host of ['localhost', '127.0.0.1']) await admin.query('DROP USER IF EXISTS ?@?', [user, host]);
    await admin.end();
  }
});
