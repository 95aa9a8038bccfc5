/**
 * The guardrail app's `purge_guardrail_events` (smarter/apps/guardrail/tasks.py), run in-process against a fresh
 * MariaDB database with Smarter's Django tables.
 */
import { seededDatabase, smarterTask as task } from '../support/smarter-db.js';
import { call } from '../support/task-context.js';

const world = seededDatabase('guardrail');

const rows = (sql: string, params: unknown[] = []) => world.db.select(sql, params);

describe('own wiring: purge_guardrail_events', () => {
  test('deletes events older than `days`, except flagged or escalated ones nobody reviewed; returns the count', async () => {
    const old = 'UTC_TIMESTAMP(6) - INTERVAL 100 DAY';
    await world.db.execute(
      `INSERT INTO guardrail_guardrailevent (created_at, disposition, reviewed) VALUES
        (${old}, 'allowed', 0), (${old}, 'flagged', 1), (${old}, 'flagged', 0), (${old}, 'ESCALATED', 0), (UTC_TIMESTAMP(6), 'allowed', 0)`,
    );
    await expect(call(task('purge_guardrail_events'), world.deps)).resolves.toBe(2);
    await expect(call(task('purge_guardrail_events'), world.deps, [200])).resolves.toBe(0);
    expect(await rows('SELECT disposition FROM guardrail_guardrailevent ORDER BY id')).toEqual([
      { disposition: 'flagged' },
      { disposition: 'ESCALATED' },
      { disposition: 'allowed' },
    ]);
  });
});
