/**
 * A NOT NULL column of Smarter's database has no DEFAULT (Django keeps `default=` in Python), so in strict SQL mode
 * (MariaDB's default) an INSERT that leaves one out fails with error 1364, as it would on Smarter's database; the
 * worker's Python defaults (tasks/db/django-defaults.ts) give every NOT NULL string column the value Django writes.
 * The columns are those of Smarter's migrations, as spec/support/smarter-migrations.ts lists them.
 */
import { type DJANGO_TABLES, pythonDefaults } from '../../tasks/db/django-defaults.js';
import { type TestDatabase, createTestDatabase } from '../support/db.js';
import { SMARTER_MIGRATIONS, columnsOf } from '../support/smarter-migrations.js';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase('schema');
});
afterAll(async () => t.drop());

test('the test database runs in strict SQL mode, as MariaDB does by default', async () => {
  const [r] = await t.db.select('SELECT @@SESSION.sql_mode AS mode');
  expect(String(r?.mode)).toMatch(/\bSTRICT_TRANS_TABLES\b/);
});

describe.each(Object.keys(SMARTER_MIGRATIONS))('%s', (table) => {
  test('an INSERT that leaves out a NOT NULL column fails with error 1364, naming it', async () => {
    const required = columnsOf(table).filter((c) => !c.nullable && c.field !== 'BigAutoField');
    for (const left of required) {
      const given = required.filter((c) => c !== left);
      const sql =
        given.length === 0
          ? `INSERT INTO \`${table}\` () VALUES ()`
          : `INSERT INTO \`${table}\` (${given.map((c) => `\`${c.name}\``).join(', ')}) VALUES (${given.map(() => '?').join(', ')})`;
      const values = given.map((c) =>
        c.field === 'JSONField'
          ? '{}'
          : c.field === 'DateTimeField'
            ? '2026-01-01 00:00:00'
            : /Char|Text|URL|Email|Image|IPAddress|Binary/.test(c.field)
              ? ''
              : 0,
      );
      const refused = await t.db.execute(sql, values).then(
        () => null,
        (err: unknown) => err as { sqlCode?: string; message?: string },
      );
      expect([
        left.name,
        refused?.sqlCode,
        refused?.message?.includes(`Field '${left.name}' doesn't have a default value`),
      ]).toEqual([left.name, 'ER_NO_DEFAULT_FOR_FIELD', true]);
    }
  });

  // Django writes '' for a NOT NULL string field that is not given (Field.get_default), a value the database never fills.
  test("the worker's Python defaults (tasks/db/django-defaults.ts) name only its columns, and every NOT NULL string column", () => {
    const defaults = pythonDefaults(table as (typeof DJANGO_TABLES)[number]);
    const columns = columnsOf(table);
    expect(Object.keys(defaults).filter((k) => !columns.some((c) => c.name === k))).toEqual([]);
    const strings = columns.filter((c) => !c.nullable && /^(Char|Text|URL|Email|Binary)Field/.test(c.field));
    expect(strings.filter((c) => !(c.name in defaults)).map((c) => c.name)).toEqual([]);
  });
});
