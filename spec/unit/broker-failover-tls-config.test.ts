import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FailoverList, Reconnects, effectiveUrl } from '../../lib/broker/amqp/amqp-connect.js';
import { describeConfig, loadConfig, redactUrl } from '../../lib/config/settings.js';
import { describeTlsFailure, parseTlsSetting, redisTls, tlsConnectOptions } from '../../lib/config/tls.js';
import { WORKER_SETTINGS } from '../../lib/app/worker-settings.js';
import { compileWorkerConfig } from '../../lib/app/worker-config.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tls-config-'));
const ca = path.join(dir, 'ca.pem');
fs.writeFileSync(ca, 'not really a certificate');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function problemsOf(env: Record<string, string>): string {
  try {
    loadConfig(WORKER_SETTINGS, env);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('expected a configuration error');
}

describe('broker URL failover list', () => {
  test('a ;-separated list of RabbitMQ URLs is accepted and kept in order', () => {
    const { values } = loadConfig(WORKER_SETTINGS, {
      CELERY_BROKER_URL: 'amqp://u:p1@a:5672//; amqps://u:p2@b:5671// ;',
    });
    expect(values.brokerUrl).toBe('amqp://u:p1@a:5672//;amqps://u:p2@b:5671//');
  });

  test('every bad URL of the list is named, by position, with its password hidden', () => {
    const msg = problemsOf({ CELERY_BROKER_URL: 'amqp://u:s3cret@a//;http://u:t0psecret@b//;amqp://u:an0ther@[bad//' });
    expect(msg).toContain('URL 2 of 3 (http://u:***@b//): expected an');
    expect(msg).toContain('URL 3 of 3 (amqp://u:***@[bad//): not a valid URL');
    expect(msg).not.toMatch(/s3cret|t0psecret|an0ther/);
  });

  test('a list mixing RabbitMQ and Redis, or several redis:// URLs, is refused; several sentinels are not', () => {
    expect(problemsOf({ CELERY_BROKER_URL: 'amqp://a//;redis://b/0' })).toContain('must be of the same broker');
    expect(problemsOf({ CELERY_BROKER_URL: 'redis://a/0;redis://b/0' })).toContain('a redis:// broker takes one URL');
    expect(
      loadConfig(WORKER_SETTINGS, { CELERY_BROKER_URL: 'sentinel://s1:26379;sentinel://s2:26379' }).values.brokerUrl,
    ).toBe('sentinel://s1:26379;sentinel://s2:26379');
  });

  test('redaction hides the password of every URL of a list, in logs and in the described configuration', () => {
    expect(redactUrl('amqp://u:p1@a//;amqp://v:p2@b//')).toBe('amqp://u:***@a//;amqp://v:***@b//');
    // A password written unencoded, with / and @ in it (the secrets test's broker password has them).
    expect(redactUrl('kafka://u:pw+/=x@y@127.0.0.1/')).toBe('kafka://u:***@127.0.0.1/');
    expect(problemsOf({ CELERY_BROKER_URL: 'kafka://u:pw-1+/=@127.0.0.1/' })).not.toContain('pw-1');
    const { values } = loadConfig(WORKER_SETTINGS, { CELERY_BROKER_URL: 'amqp://u:p1@a//;amqp://v:p2@b//' });
    expect(JSON.stringify(describeConfig(WORKER_SETTINGS, values))).not.toMatch(/p1|p2/);
  });

  test('round-robin: each failure moves to the next URL, and only a full cycle of failures asks for a backoff', () => {
    const f = new FailoverList('amqp://a;amqp://b;amqp://c');
    expect(f.current).toBe('amqp://a');
    f.failed();
    expect([f.current, f.roundDone]).toEqual(['amqp://b', false]);
    f.failed();
    expect([f.current, f.roundDone]).toEqual(['amqp://c', false]);
    f.failed();
    expect([f.current, f.roundDone]).toEqual(['amqp://a', true]);
    f.succeeded();
    f.failed();
    expect([f.current, f.roundDone]).toEqual(['amqp://b', false]);
    const single = new FailoverList('amqp://a');
    single.failed();
    expect([single.current, single.roundDone]).toEqual(['amqp://a', true]);
  });

  test('reconnects: at once to the next URL within a cycle, then a doubling wait (±20 %) up to the cap, reset by a success', () => {
    const r = new Reconnects('amqp://u:secret@a;amqp://b', 100, 300);
    expect(r.failed()).toBe(0);
    expect(r.describe(0)).toBe('retrying with amqp://b in 0 ms');
    const waits = Array.from({ length: 8 }, () => r.failed());
    expect(waits.filter((_, i) => i % 2 === 1)).toEqual([0, 0, 0, 0]);
    const [w1, w2, w3, w4] = waits.filter((_, i) => i % 2 === 0);
    expect([w1, w2, w3, w4].every((w) => w !== undefined)).toBe(true);
    expect([(w1 ?? 0) >= 80 && (w1 ?? 0) <= 120, (w2 ?? 0) >= 160 && (w2 ?? 0) <= 240]).toEqual([true, true]);
    expect([(w3 ?? 0) >= 240 && (w3 ?? 0) <= 360, (w4 ?? 0) >= 240 && (w4 ?? 0) <= 360]).toEqual([true, true]);
    r.succeeded();
    expect(r.url).toBe('amqp://b');
    expect(r.failed()).toBe(0);
    expect(r.failed()).toBeLessThanOrEqual(120);
    expect(new Reconnects('amqp://a', 100, 300).describe(5)).toBe('retrying in 5 ms');
  });
});

describe('TLS settings (Celery broker_use_ssl, redis_backend_use_ssl)', () => {
  test('off by default; amqps:// then verifies the server against the system CAs', () => {
    const { values } = loadConfig(WORKER_SETTINGS, {});
    expect(values.brokerUseSsl.enabled).toBe(false);
    expect(tlsConnectOptions(values.brokerUseSsl)).toEqual({ rejectUnauthorized: true });
  });

  test('a JSON object with the CA, client certificate and key; verification off only with CERT_NONE', () => {
    const s = parseTlsSetting(JSON.stringify({ ca_certs: ca, certfile: ca, keyfile: ca }));
    expect(s).toMatchObject({ enabled: true, caFile: ca, certFile: ca, keyFile: ca, certReqs: 'required' });
    const o = tlsConnectOptions(s);
    expect(o.rejectUnauthorized).toBe(true);
    expect([o.ca, o.cert, o.key].every((b) => Buffer.isBuffer(b))).toBe(true);
    expect(tlsConnectOptions(parseTlsSetting('{"cert_reqs": "CERT_OPTIONAL"}')).rejectUnauthorized).toBe(true);
    expect(tlsConnectOptions(parseTlsSetting('{"cert_reqs": "CERT_NONE"}')).rejectUnauthorized).toBe(false);
    expect(tlsConnectOptions(parseTlsSetting('{"ssl_cert_reqs": 0}')).rejectUnauthorized).toBe(false);
  });

  test('every problem of the setting is reported at once: unknown key, bad cert_reqs, unreadable files', () => {
    const msg = problemsOf({
      CELERY_BROKER_USE_SSL: JSON.stringify({
        ca_cert: ca,
        cert_reqs: 'maybe',
        certfile: '/nonexistent/c.pem',
        keyfile: '/nonexistent/k.pem',
      }),
    });
    expect(msg).toContain('unknown key(s) ca_cert');
    expect(msg).toContain('cert_reqs must be CERT_REQUIRED, CERT_OPTIONAL or CERT_NONE, got "maybe"');
    expect(msg).toContain('certfile "/nonexistent/c.pem" cannot be read (ENOENT)');
    expect(msg).toContain('keyfile "/nonexistent/k.pem" cannot be read (ENOENT)');
  });

  test('broker_use_ssl turns amqp:// into amqps://, as kombu ssl=True does', () => {
    expect(effectiveUrl('amqp://h:5671//', parseTlsSetting('true'))).toBe('amqps://h:5671//');
    expect(effectiveUrl('amqp://h//')).toBe('amqp://h//');
  });

  test("rediss:// takes Celery's ssl_* query parameters over the setting and loses them from the URL", () => {
    const r = redisTls(
      `rediss://:pw@h:6380/1?ssl_cert_reqs=CERT_NONE&ssl_ca_certs=${encodeURIComponent(ca)}`,
      parseTlsSetting('{"ssl_cert_reqs": "required"}'),
    );
    expect(r.url).toBe('rediss://:pw@h:6380/1');
    expect(r.tls).toMatchObject({ enabled: true, caFile: ca, certReqs: 'none' });
    expect(redisTls('rediss://h:6380/0').tls).toMatchObject({ enabled: true, certReqs: 'required' });
    expect(redisTls('redis://h:6379/0').tls).toBeNull();
  });

  test('a result backend URL with ssl_* parameters on redis://, or a bad one on rediss://, is a configuration error', () => {
    expect(problemsOf({ CELERY_RESULT_BACKEND: 'redis://h/0?ssl_cert_reqs=required' })).toContain(
      'need a rediss:// URL',
    );
    expect(problemsOf({ CELERY_RESULT_BACKEND: 'rediss://:pw@h/0?ssl_cert_reqs=sometimes' })).toContain(
      'cert_reqs must be',
    );
  });

  test('the compiled configuration carries the broker TLS, connect timeout and task queue type', () => {
    const { values } = loadConfig(WORKER_SETTINGS, {
      CELERY_BROKER_USE_SSL: '{"cert_reqs": "CERT_NONE"}',
      CELERY_BROKER_CONNECTION_TIMEOUT: '2.5',
      CELERY_TASK_DEFAULT_QUEUE_TYPE: 'quorum',
    });
    const c = compileWorkerConfig(values, { defaultQueue: 'q' });
    expect(c.broker).toMatchObject({
      tls: { enabled: true, certReqs: 'none' },
      connectTimeoutMs: 2500,
      queueType: 'quorum',
    });
  });

  test('a refused certificate is explained with what to set; other errors are left as they are', () => {
    const err = Object.assign(new Error('self-signed certificate in certificate chain'), {
      code: 'SELF_SIGNED_CERT_IN_CHAIN',
    });
    expect(describeTlsFailure(err, 'CELERY_BROKER_USE_SSL')).toMatch(/not trusted .*ca_certs in CELERY_BROKER_USE_SSL/);
    expect(
      describeTlsFailure(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }), 'X'),
    ).toBeUndefined();
  });
});
