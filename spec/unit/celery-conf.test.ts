/**
 * `inspect conf` as Celery's `app.conf.table()` through `filter_hidden_settings` (celery/app/utils.py):
 * lowercase names, defaults left out unless asked, secrets censored with Celery's mask.
 */
import { celeryConf, maskUrlPassword } from '../../lib/config/celery-conf.js';
import { loadConfig } from '../../lib/config/settings.js';
import { SETTINGS } from '../../tasks/settings.js';

const values = loadConfig(SETTINGS, {
  CELERY_BROKER_URL: 'redis://:s3cret@redis:6379/0',
  CELERY_RESULT_BACKEND: 'redis://user:p%40ss@redis:6379/1',
  CELERY_BROKER_TRANSPORT_OPTIONS: '{"visibility_timeout": 7200, "global_keyprefix": "smarter:"}',
  CELERY_WORKER_CONCURRENCY: '8',
  SMARTER_MYSQL_PASSWORD: 'db-password',
  SMARTER_MYSQL_HOST: 'mariadb',
}).values;

test('Celery names for Celery settings, lowercased environment names for ours, only what differs from the defaults', () => {
  const conf = celeryConf(SETTINGS, values, false);
  expect(conf).toMatchObject({ worker_concurrency: 8, smarter_mysql_host: 'mariadb' });
  expect(conf).not.toHaveProperty('task_acks_late');
  expect(Object.keys(conf).every((k) => /^[a-z0-9_]+$/.test(k))).toBe(true);
  expect(celeryConf(SETTINGS, values, true)).toMatchObject({ task_acks_late: false, accept_content: ['json'] });
});

test('secrets are censored as Celery does: URL passwords masked, keys naming a secret hidden whole, nested ones too', () => {
  const conf = celeryConf(SETTINGS, values, false);
  expect(conf.broker_url).toBe('redis://:********@redis:6379/0');
  expect(conf.result_backend).toBe('redis://user:********@redis:6379/1');
  expect(conf.smarter_mysql_password).toBe('********');
  // Celery's HIDDEN_SETTINGS matches KEY in a nested key too (`global_keyprefix`); the transport options get snake_case keys.
  expect(conf.broker_transport_options).toEqual({
    visibility_timeout: 7200,
    master_name: null,
    global_keyprefix: '********',
  });
  expect(JSON.stringify(celeryConf(SETTINGS, values, true))).not.toMatch(/s3cret|p%40ss|db-password/);
});

test('a failover list keeps every host and loses every password', () => {
  expect(maskUrlPassword('amqp://u:a@h1//;amqp://u:b@h2//')).toBe('amqp://u:********@h1//;amqp://u:********@h2//');
});
