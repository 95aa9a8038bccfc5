/**
 * Celery's command line over this worker: every option of Celery 5.6's `celery worker` (celery/bin/worker.py,
 * the daemon options of celery/bin/base.py, the global ones of celery/bin/celery.py) is accepted, in each of
 * its spellings, and either read as a setting or named as ignored with a reason; Smarter's own worker commands
 * (helm/charts/smarter/templates/deployment-worker*.yaml, docker-compose.yml) give the configuration they mean.
 */
import { CELERY_GLOBAL_FLAGS, CELERY_WORKER_FLAGS, translateCeleryArgs } from '../../lib/config/celery-flags.js';
import { loadConfig } from '../../lib/config/settings.js';
import { SETTINGS } from '../../tasks/settings.js';

/** A valid value for each option that takes one. */
const SAMPLE: Record<string, string> = {
  '--hostname': 'w1@%h',
  '--statedb': '/tmp/celery-cli-statedb',
  '--loglevel': 'info',
  '--optimization': 'fair',
  '--prefetch-multiplier': '2',
  '--concurrency': '5',
  '--pool': 'solo',
  '--time-limit': '300',
  '--soft-time-limit': '240',
  '--max-tasks-per-child': '100',
  '--max-memory-per-child': '200000',
  '--queues': 'q1,q2',
  '--exclude-queues': 'q2',
  '--include': 'proj.tasks',
  '--heartbeat-interval': '5',
  '--autoscale': '10,3',
  '--schedule-filename': 'celerybeat-schedule',
  '--scheduler': 'redbeat.RedBeatScheduler',
  '--logfile': '/tmp/celery-cli.log',
  '--pidfile': '/tmp/celery-cli.pid',
  '--uid': '1000',
  '--gid': '1000',
  '--umask': '022',
  '--executable': '/usr/bin/python3',
  '--app': 'smarter.workers.celery.app',
  '--broker': 'amqp://guest:guest@localhost:5672//',
  '--result-backend': 'redis://localhost:6379/0',
  '--loader': 'celery.loaders.app:AppLoader',
  '--config': 'celeryconfig',
  '--workdir': '/tmp',
};

const ALL = [...CELERY_WORKER_FLAGS, ...CELERY_GLOBAL_FLAGS];
const longName = (names: readonly string[]) => names.find((n) => n.startsWith('--')) ?? '';

/** Every spelling of every option: `--name value`, `--name=value`, `-x value`, `-xvalue`; flags alone. */
const CASES: Array<[string, string[]]> = ALL.flatMap((f): Array<[string, string[]]> => {
  const value = f.value ? SAMPLE[longName(f.names)] : undefined;
  return f.names.flatMap((name) => {
    if (value === undefined) return [[name, [name]]];
    const forms = [[name, value]];
    if (name.startsWith('--')) forms.push([`${name}=${value}`]);
    else forms.push([`${name}${value}`]);
    return forms.map((argv): [string, string[]] => [argv.join(' '), argv]);
  });
});

test('every option of celery worker has a valid sample value in this table', () => {
  for (const f of ALL) if (f.value) expect([longName(f.names), SAMPLE[longName(f.names)]]).not.toContain(undefined);
  // Celery 5.6.3: 26 worker options, 6 daemon options, 9 global ones.
  expect(CELERY_WORKER_FLAGS).toHaveLength(32);
  expect(CELERY_GLOBAL_FLAGS).toHaveLength(9);
});

test.each(CASES)('celery worker %s is accepted: read as a setting or ignored with a reason', (_label, argv) => {
  const t = translateCeleryArgs(argv);
  const flag =
    ALL.find((f) => f.names.includes((argv[0] ?? '').split('=')[0] ?? '')) ??
    ALL.find((f) => f.names.includes((argv[0] ?? '').slice(0, 2)));
  expect(flag).toBeDefined();
  // The settings loader refuses any flag it does not know: it accepts what the translation leaves.
  const loaded = loadConfig(SETTINGS, {}, t.args);
  expect(loaded.positionals).toEqual([]);
  const use = flag?.use;
  if (use?.kind === 'ignored') {
    expect(t.args).toEqual([]);
    expect(t.ignored).toHaveLength(1);
    expect(t.ignored[0]).toContain(`ignored: ${use.why}`);
  } else if (use?.kind === 'setting' && !['broker', 'workdir', 'result-backend'].includes(use.long)) {
    expect(t.ignored).toEqual([]);
    const key = Object.entries(SETTINGS).find(([, s]) => s.flag?.long === use.long)?.[0] ?? '';
    expect((loaded.sources as Record<string, string>)[key]).toBe(`--${use.long}`);
  }
});

test("Smarter's chart command gives the worker it means", () => {
  // helm/charts/smarter/templates/deployment-worker.yaml
  const argv = ['--concurrency=5', '--loglevel=info', '-Q', 'default_celery_task_queue', '-E'];
  const t = translateCeleryArgs(['-A', 'smarter.workers.celery.app', ...argv]);
  expect(t.app).toBe('smarter.workers.celery.app');
  const c = loadConfig(SETTINGS, {}, t.args).values;
  expect([c.concurrency, c.logLevel, c.queues, c.taskEvents, c.hostname]).toEqual([
    5,
    'info',
    ['default_celery_task_queue'],
    true,
    'celery@%h',
  ]);
});

test("Smarter's infrastructure command names its node infrastructure@%h", () => {
  // helm/charts/smarter/templates/deployment-worker-infrastructure.yaml, docker-compose.yml
  const t = translateCeleryArgs(
    '-A smarter.workers.celery.app --concurrency=4 --loglevel=info -Q infrastructure_celery_task_queue -E -n infrastructure@%h'.split(
      ' ',
    ),
  );
  const c = loadConfig(SETTINGS, {}, t.args).values;
  expect([c.concurrency, c.queues, c.hostname]).toEqual([4, ['infrastructure_celery_task_queue'], 'infrastructure@%h']);
});

test('the honoured options land in the settings they mean', () => {
  const t = translateCeleryArgs(
    '--time-limit 300 --soft-time-limit=240 --purge -X b -Q a,b --autoscale 10,3 --max-tasks-per-child 100 --max-memory-per-child 200000 --disable-prefetch -O fair --without-gossip --without-heartbeat --without-mingle --heartbeat-interval 5 --pidfile /tmp/p -f /tmp/l --discard --events'.split(
      ' ',
    ),
  );
  const c = loadConfig(SETTINGS, {}, t.args).values;
  expect(c).toMatchObject({
    taskTimeLimit: 300,
    taskSoftTimeLimit: 240,
    purge: true,
    excludeQueues: ['b'],
    autoscale: { max: 10, min: 3 },
    maxTasksPerChild: 100,
    maxMemoryPerChild: 200000,
    disablePrefetch: true,
    optimization: 'fair',
    withoutGossip: true,
    withoutHeartbeat: true,
    withoutMingle: true,
    heartbeatInterval: 5,
    pidfile: '/tmp/p',
    logfile: '/tmp/l',
    taskEvents: true,
  });
});

test('a value Celery itself refuses is still a configuration error', () => {
  expect(() => loadConfig(SETTINGS, {}, translateCeleryArgs(['--autoscale', '3,10']).args)).toThrow(/MAX,MIN/);
  expect(() => loadConfig(SETTINGS, {}, translateCeleryArgs(['-O', 'fast']).args)).toThrow(/default, fair/);
});
