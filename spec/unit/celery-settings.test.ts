/**
 * Celery's settings by their Django names (`CELERY_<NAME>`, celery/app/defaults.py): each of the 194 is read
 * here or named as not applicable with its reason; a `CELERY_*` that is no setting (a typo) is named too; the
 * annotations, default rate limit and disabled rate limits are laid over the tasks.
 */
import { overlayTasks, parseAnnotations } from '../../lib/app/annotations.js';
import {
  CELERY_56_SETTINGS,
  celeryEnvReport,
  celeryEnvWarnings,
  celerySettingUse,
  envNames,
} from '../../lib/config/celery-settings.js';
import { loadConfig } from '../../lib/config/settings.js';
import type { AnyTask } from '../../lib/registry/define-task.js';
import { SETTINGS } from '../../tasks/settings.js';

const READ = envNames(SETTINGS);

test('every one of Celery 5.6 settings is honoured or has a reason', () => {
  expect(CELERY_56_SETTINGS).toHaveLength(194);
  const honoured = CELERY_56_SETTINGS.filter((n) => celerySettingUse(n, READ).kind === 'honoured');
  expect(honoured).toEqual(
    expect.arrayContaining([
      'worker_soft_shutdown_timeout',
      'task_annotations',
      'task_default_rate_limit',
      'worker_disable_rate_limits',
      'worker_max_memory_per_child',
      'worker_max_tasks_per_child',
      'worker_disable_prefetch',
      'worker_pool_restarts',
    ]),
  );
  for (const n of CELERY_56_SETTINGS) {
    const use = celerySettingUse(n, READ);
    if (use.kind === 'not-applicable') expect([n, use.why.length > 10]).toEqual([n, true]);
  }
});

test('one warning names the settings set that do not apply, another the CELERY_* that are no setting', () => {
  const env = {
    CELERY_WORKER_POOL: 'prefork',
    CELERY_TASK_ALWAYS_EAGER: 'true',
    CELERY_WORKER_CONCURENCY: '3',
    CELERY_WORKER_CONCURRENCY: '4',
    CELERY_WORKER_SOFT_SHUTDOWN_TIMEOUT: '30',
    CELERY_REDBEAT_REDIS_URL: 'redis://x',
    PATH: '/usr/bin',
  };
  const report = celeryEnvReport(env, READ);
  expect(report.notApplicable.map((x) => x.env)).toEqual([
    'CELERY_REDBEAT_REDIS_URL',
    'CELERY_TASK_ALWAYS_EAGER',
    'CELERY_WORKER_POOL',
  ]);
  expect(report.unknown).toEqual(['CELERY_WORKER_CONCURENCY']);
  const warnings = celeryEnvWarnings(report);
  expect(warnings).toHaveLength(2);
  expect(warnings[0]).toMatch(/CELERY_WORKER_POOL \(a Python worker internal/);
  expect(warnings[1]).toMatch(/typo\?\): CELERY_WORKER_CONCURENCY$/);
  expect(celeryEnvWarnings(celeryEnvReport({ CELERY_WORKER_CONCURRENCY: '4' }, READ))).toEqual([]);
});

test("CELERY_WORKER_SOFT_SHUTDOWN_TIMEOUT is the warm shutdown's grace", () => {
  expect(loadConfig(SETTINGS, { CELERY_WORKER_SOFT_SHUTDOWN_TIMEOUT: '45' }).values.shutdownGrace).toBe(45);
});

const task = (name: string, extra: Partial<AnyTask> = {}): AnyTask =>
  ({
    name,
    queue: 'q',
    params: undefined,
    argNames: [],
    varArgs: false,
    run: () => null,
    ...extra,
  }) as unknown as AnyTask;

test('task annotations lay rate, time limits, acks_late and max_retries over the tasks, the name over *', () => {
  const annotations = parseAnnotations(
    JSON.stringify({
      '*': { rate_limit: '10/s', time_limit: 60 },
      'app.b': { rate_limit: null, soft_time_limit: 5, acks_late: true, max_retries: 7 },
    }),
  );
  const original = task('app.b', { retry: { maxRetries: 3, retryBackoff: true } });
  const [a, b] = overlayTasks([task('app.a'), original], {
    annotations,
    defaultRateLimit: null,
    disableRateLimits: false,
  });
  expect(a).toMatchObject({ rateLimit: '10/s', timeLimit: 60 });
  expect(b).toMatchObject({ rateLimit: undefined, timeLimit: 60, softTimeLimit: 5, acksLate: true });
  expect(b?.retry).toEqual({ maxRetries: 7, retryBackoff: true });
  // The definitions are shared: they are copied, never changed.
  expect(original.acksLate).toBeUndefined();
});

test('the default rate limit applies to tasks without one; disabled rate limits remove every one', () => {
  const tasks = [task('a'), task('b', { rateLimit: '1/m' })];
  const none = new Map();
  expect(
    overlayTasks(tasks, { annotations: none, defaultRateLimit: '5/s', disableRateLimits: false }).map(
      (t) => t.rateLimit,
    ),
  ).toEqual(['5/s', '1/m']);
  expect(
    overlayTasks(tasks, { annotations: none, defaultRateLimit: '5/s', disableRateLimits: true }).map(
      (t) => t.rateLimit,
    ),
  ).toEqual([undefined, undefined]);
});

test('bad annotations are a configuration error that says what is wrong', () => {
  expect(() => loadConfig(SETTINGS, { CELERY_TASK_ANNOTATIONS: '{"*": {"rate": "1/s"}}' })).toThrow(
    /unknown key\(s\) rate/,
  );
  expect(() => loadConfig(SETTINGS, { CELERY_TASK_ANNOTATIONS: '{"*": {"rate_limit": "fast"}}' })).toThrow(
    /rate_limit/,
  );
  expect(() => loadConfig(SETTINGS, { CELERY_TASK_DEFAULT_RATE_LIMIT: 'x' })).toThrow(/CELERY_TASK_DEFAULT_RATE_LIMIT/);
});
