/**
 * Smarter's database schema (tasks/db/schema.sql) has the columns of Smarter's Django migrations: every table the
 * worker INSERTs into or UPDATEs has every column that Smarter's Django migrations give it, NOT NULL exactly where the
 * field has null=False, the type Django's MySQL backend creates on MariaDB, and no column DEFAULT (Django keeps
 * `default=` in Python). The fields are those of smarter/smarter/apps/<app>/migrations/<name>.py, as
 * spec/support/smarter-migrations.ts lists them.
 */
import { DJANGO_TABLES } from '../../tasks/db/django-defaults.js';
import { type TestDatabase, createTestDatabase } from '../support/db.js';
import { SMARTER_MIGRATIONS, columnType, columnsOf } from '../support/smarter-migrations.js';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase('schema');
});
afterAll(async () => t.drop());

test('the tables are those the worker writes, each with the migrations its columns come from', () => {
  expect(Object.keys(SMARTER_MIGRATIONS).sort()).toEqual([...DJANGO_TABLES].sort());
  for (const [table, spec] of Object.entries(SMARTER_MIGRATIONS)) {
    expect([table, spec.migrations.length > 0]).toEqual([table, true]);
  }
});

describe.each(Object.keys(SMARTER_MIGRATIONS))('%s', (table) => {
  test("has exactly the columns of Smarter's migrations: type, NULL or NOT NULL, no DEFAULT", async () => {
    const rows = await t.db.select(
      `SELECT c.COLUMN_NAME AS name, c.COLUMN_TYPE AS type, c.IS_NULLABLE AS nullable, c.COLUMN_DEFAULT AS dflt,
              (SELECT COUNT(*) FROM information_schema.CHECK_CONSTRAINTS k
                WHERE k.CONSTRAINT_SCHEMA = c.TABLE_SCHEMA AND k.TABLE_NAME = c.TABLE_NAME AND k.CONSTRAINT_NAME = c.COLUMN_NAME
                  AND k.CHECK_CLAUSE LIKE 'json_valid(%') AS json
         FROM information_schema.COLUMNS c WHERE c.TABLE_SCHEMA = ? AND c.TABLE_NAME = ?`,
      [t.name, table],
    );
    const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : 1);
    const actual = rows
      .map((r) => ({
        name: String(r.name),
        type: String(r.type),
        nullable: r.nullable === 'YES',
        // MariaDB shows a nullable column without a DEFAULT as 'NULL'.
        dflt: r.dflt === null || r.dflt === 'NULL' ? null : String(r.dflt),
        json: Number(r.json) > 0,
      }))
      .sort(byName);
    const expected = columnsOf(table)
      .map((c) => ({
        name: c.name,
        type: columnType(c.field),
        nullable: c.nullable,
        dflt: null,
        json: c.field === 'JSONField',
      }))
      .sort(byName);
    expect(actual).toEqual(expected);
  });
});
