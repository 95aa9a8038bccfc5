import { describeConfig, loadConfig, redactUrl, settingsTable } from '../../lib/config/settings.js';
import { WORKER_SETTINGS, expandNodeName } from '../../lib/app/worker-settings.js';

describe('the configuration loader', () => {
  test("Celery's defaults when nothing is set", () => {
    const { values } = loadConfig(WORKER_SETTINGS, {});
    expect(values.brokerUrl).toBe('amqp://guest:guest@localhost:5672//');
    expect(values.prefetchMultiplier).toBe(4);
    expect(values.hostname).toBe('celery@%h');
    expect(values.resultBackend).toBe('');
  });

  test("Celery's flags: -Q (repeatable, comma lists), -c, -n, -E, --loglevel, --prefetch-multiplier", () => {
    const { values } = loadConfig(WORKER_SETTINGS, {}, [
      '-Q',
      'a,b',
      '-Q',
      'c',
      '-c',
      '5',
      '-n',
      'infra@%h',
      '-E',
      '--loglevel',
      'WARNING',
      '--prefetch-multiplier',
      '1',
    ]);
    expect(values.queues).toEqual(['a', 'b', 'c']);
    expect(values.concurrency).toBe(5);
    expect(values.hostname).toBe('infra@%h');
    expect(values.taskEvents).toBe(true);
    expect(values.logLevel).toBe('warn');
    expect(values.prefetchMultiplier).toBe(1);
  });

  test('flags win over environment variables', () => {
    const { values } = loadConfig(WORKER_SETTINGS, { CELERY_WORKER_CONCURRENCY: '3' }, ['--concurrency=7']);
    expect(values.concurrency).toBe(7);
  });

  test('every problem is reported at once, and the broker password never appears', () => {
    let message = '';
    try {
      loadConfig(
        WORKER_SETTINGS,
        {
          CELERY_BROKER_URL: 'kafka://:s3cret@host/1',
          CELERY_WORKER_CONCURRENCY: 'many',
          CELERY_ACCEPT_CONTENT: 'json,pickle',
        },
        ['--bogus'],
      );
    } catch (err) {
      message = (err as Error).message;
      expect((err as { problems: string[] }).problems).toHaveLength(4);
    }
    expect(message).toContain('CELERY_BROKER_URL');
    expect(message).toContain('CELERY_WORKER_CONCURRENCY');
    expect(message).toContain('pickle is never accepted');
    expect(message).toContain('bogus');
    expect(message).not.toContain('s3cret');
  });

  test('the resolved configuration is logged with secrets redacted', () => {
    const { values } = loadConfig(WORKER_SETTINGS, {
      CELERY_BROKER_URL: 'amqp://user:hunter2@rabbit:5672//',
      CELERY_RESULT_BACKEND: 'redis://:pw@redis:6379/1',
    });
    const shown = JSON.stringify(describeConfig(WORKER_SETTINGS, values));
    expect(shown).not.toContain('hunter2');
    expect(shown).not.toContain(':pw@');
    expect(shown).toContain('amqp://user:***@rabbit:5672//');
  });

  test('redactUrl keeps everything but the password', () => {
    expect(redactUrl('amqps://u:p@h:5671/vh')).toBe('amqps://u:***@h:5671/vh');
    expect(redactUrl('rpc://')).toBe('rpc://');
    // Written unencoded, a password may hold '/', '@' or '#': still hidden whole (the secrets test found this).
    expect(redactUrl('amqp://u:p+/=@h//')).toBe('amqp://u:***@h//');
    expect(redactUrl('amqp://u:p@x/y#z@h:5672/vh')).toBe('amqp://u:***@h:5672/vh');
  });

  test("node names expand Celery's %h, %n and %d", () => {
    expect(expandNodeName('infrastructure@%h', 'web-1.example.com')).toBe('infrastructure@web-1.example.com');
    expect(expandNodeName('w@%n', 'web-1.example.com')).toBe('w@web-1');
    expect(expandNodeName('%d', 'web-1.example.com')).toBe('celery@example.com');
  });

  test('the settings table lists every setting', () => {
    const table = settingsTable(WORKER_SETTINGS);
    for (const s of Object.values(WORKER_SETTINGS)) expect(table).toContain(s.env[0]);
  });
});
