/**
 * charts/smarter-worker through real helm (3.17, spec/support/helm.ts): `helm lint --strict`, then `helm template`
 * over a matrix of values, every rendered object validated against the schema of its kind (kubernetes-models and
 * the CRD packages, spec/support/kube-validate.ts), and what the chart promises read from the rendered objects:
 * the queues defined once, each container's command line and environment accepted by the worker's and Beat's own
 * configuration loaders, probes on the health endpoints, the least RBAC, the autoscalers.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BEAT_SETTINGS } from '../../beat/settings.js';
import { loadConfig } from '../../lib/config/settings.js';
import { SETTINGS } from '../../tasks/settings.js';
import {
  type ChartContainer,
  type ChartValues,
  type Manifest,
  chartEnv,
  containerProcess,
  lintChart,
  renderChart,
} from '../support/chart.js';
import { validateKubeObject } from '../support/kube-validate.js';

const QUEUES = ['default_celery_task_queue', 'infrastructure_celery_task_queue'];

/** What each Secret the chart names by default holds, as a cluster would have them. */
const SECRETS: Record<string, Record<string, string>> = {
  'smarter-celery': {
    CELERY_BROKER_URL: 'amqp://smarter:pw@rabbitmq:5672//',
    CELERY_RESULT_BACKEND: 'redis://redis:6379/0',
    RABBITMQ_MANAGEMENT_URL: 'http://smarter:pw@rabbitmq:15672/',
  },
  'smarter-mysql': { SMARTER_MYSQL_PASSWORD: 'pw' },
};

/** One deployment shape per entry: each is a way Smarter's operators run the chart (values.yaml documents each key). */
const MATRIX: Record<string, ChartValues> = {
  defaults: {},
  'Redis broker, KEDA on the queue lists': {
    keda: { enabled: true, broker: 'redis', redis: { addressKey: 'REDIS_ADDRESS', passwordKey: 'REDIS_PASSWORD' } },
  },
  'RabbitMQ with TLS and a private CA': {
    tls: { secretName: 'smarter-broker-tls' },
    env: {
      CELERY_BROKER_USE_SSL: '{"ca_certs": "/etc/smarter/tls/ca.crt"}',
      CELERY_REDIS_BACKEND_USE_SSL: '{"ssl_ca_certs": "/etc/smarter/tls/ca.crt", "ssl_cert_reqs": "CERT_REQUIRED"}',
    },
  },
  'KEDA on RabbitMQ': { keda: { enabled: true } },
  'monitoring and ServiceMonitor': {
    monitoring: { enabled: true, ruleLabels: { release: 'kube-prometheus-stack' } },
    serviceMonitor: { enabled: true },
  },
  'existing Secrets and ServiceAccount, IRSA, no result backend': {
    secrets: {
      broker: { name: 'platform-broker', key: 'url' },
      resultBackend: { name: '' },
      beatRedis: { name: 'platform-redis', key: 'url' },
      mysql: { name: 'platform-mysql', passwordKey: 'password' },
      aws: { name: 'platform-aws' },
      app: { name: 'platform-app' },
    },
    serviceAccount: {
      create: false,
      name: 'smarter-infra',
      annotations: { 'eks.amazonaws.com/role-arn': 'arn:aws:iam::123456789012:role/smarter' },
    },
    rbac: { create: true },
  },
  'workers only, no autoscaler, self-hosted settings': {
    beat: { enabled: false },
    worker: { hpa: { enabled: false }, replicaCount: 3 },
    workerInfrastructure: {
      hpa: { enabled: false },
      env: { ROOT_DOMAIN: 'example.com', ENVIRONMENT: 'prod', AWS_REGION: 'us-east-1' },
    },
    imagePullSecrets: [{ name: 'ghcr' }],
    tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'smarter', effect: 'NoSchedule' }],
  },
};

const rendered = new Map<string, Manifest[]>();
const rendering = (name: string): Manifest[] => {
  let objects = rendered.get(name);
  if (!objects) {
    objects = renderChart(MATRIX[name]);
    rendered.set(name, objects);
  }
  return objects;
};
const of = (objects: Manifest[], kind: string, name: string) =>
  objects.find((o) => o.kind === kind && o.metadata.name === name);

interface PodSpec {
  serviceAccountName?: string;
  automountServiceAccountToken?: boolean;
  terminationGracePeriodSeconds?: number;
  containers: Array<{
    name: string;
    startupProbe?: { httpGet?: { path: string; port: string } };
    livenessProbe?: { httpGet?: { path: string; port: string } };
    readinessProbe?: { httpGet?: { path: string; port: string } };
    securityContext?: Record<string, unknown>;
    volumeMounts?: Array<{ name: string; mountPath: string; readOnly?: boolean }>;
  }>;
  volumes?: Array<{ name: string; secret?: { secretName: string } }>;
}
const podOf = (d: Manifest | undefined): PodSpec => (d?.spec as { template: { spec: PodSpec } }).template.spec;
const replicasOf = (d: Manifest | undefined) => (d?.spec as { replicas?: number }).replicas;

/** Loads a worker container's configuration exactly as the process would: the worker's own settings, strict flags. */
const workerConfig = (c: ChartContainer, secrets = SECRETS) => {
  const { argv, env } = containerProcess(c, secrets);
  expect(argv.slice(0, 2)).toEqual(['node', 'dist/tasks/main.js']);
  return loadConfig(SETTINGS, env, argv.slice(2)).values;
};

describe('helm lint --strict', () => {
  test.each(Object.keys(MATRIX))('passes with the values of "%s"', (name) => {
    expect(lintChart(MATRIX[name])).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
  });

  test('fails on values the chart refuses, by values.schema.json (the lint is not a formality)', () => {
    expect(() =>
      lintChart({ keda: { enabled: true, broker: 'nats' }, worker: { concurrency: '64' }, kedaa: {} }),
    ).toThrow(
      /Additional property kedaa is not allowed[\s\S]*worker.concurrency: Invalid type[\s\S]*keda.broker must be one of/,
    );
  });
});

describe('helm template: every object of every values combination is valid for its kind', () => {
  const counts = { combinations: 0, objects: 0, invalid: 0 };
  afterAll(() => {
    // The figures the chart's documentation and the changelog quote.
    process.stdout.write(
      `chart matrix: ${counts.combinations} values combinations, ${counts.objects} objects rendered and validated, ${counts.invalid} invalid\n`,
    );
  });

  test.each(Object.keys(MATRIX))('%s', (name) => {
    const objects = rendering(name);
    const invalid = objects.flatMap((o) => {
      const r = validateKubeObject(o);
      return r.ok ? [] : [{ object: `${o.kind} ${o.metadata.name}`, errors: r.errors }];
    });
    counts.combinations++;
    counts.objects += objects.length;
    counts.invalid += invalid.length;
    expect(objects.length).toBeGreaterThanOrEqual(8);
    expect(invalid).toEqual([]);
  });

  test('the validator is not a formality: a rendered Deployment with a bad field, and a kind nobody models, fail', () => {
    const d = structuredClone(of(rendering('defaults'), 'Deployment', 'smarter-worker')) as Manifest;
    (d.spec as { replicas: unknown }).replicas = 'two';
    expect(validateKubeObject(d)).toMatchObject({ ok: false, errors: [{ path: 'spec.replicas' }] });
    expect(validateKubeObject({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } })).toMatchObject(
      {
        ok: false,
        errors: [{ path: 'kind' }],
      },
    );
  });
});

describe('what the rendered chart promises', () => {
  test('the queue names are defined once: other values reach every -Q, every container env and the producers ConfigMap', () => {
    const objects = renderChart({ queues: { operational: 'ops-q', infrastructure: 'infra-q' } });
    const text = JSON.stringify(objects);
    for (const q of QUEUES) expect(text).not.toContain(q);
    expect(of(objects, 'ConfigMap', 'smarter-queues')?.data).toEqual({
      SMARTER_LLM_CLIENT_TASKS_CELERY_TASK_QUEUE: 'ops-q',
      SMARTER_INFRASTRUCTURE_TASKS_CELERY_TASK_QUEUE: 'infra-q',
    });
    for (const d of ['worker', 'worker-infrastructure', 'beat'] as const) {
      const { env } = containerProcess(
        chartEnv({ queues: { operational: 'ops-q', infrastructure: 'infra-q' } }, d),
        SECRETS,
      );
      expect([
        d,
        env.SMARTER_LLM_CLIENT_TASKS_CELERY_TASK_QUEUE,
        env.SMARTER_INFRASTRUCTURE_TASKS_CELERY_TASK_QUEUE,
      ]).toEqual([d, 'ops-q', 'infra-q']);
    }
    expect(workerConfig(chartEnv({ queues: { operational: 'ops-q' } }, 'worker')).queues).toEqual(['ops-q']);
  });

  test("each worker's command line and env load through the worker's own settings: its queue, node name, port, grace", () => {
    const worker = workerConfig(chartEnv({}, 'worker'));
    const infra = workerConfig(chartEnv({}, 'worker-infrastructure'));
    expect(worker).toMatchObject({ queues: [QUEUES[0]], concurrency: 64, httpPort: 8080, shutdownGrace: 60 });
    expect(worker.brokerUrl).toBe(SECRETS['smarter-celery']?.CELERY_BROKER_URL);
    expect(worker.resultBackend).toBe(SECRETS['smarter-celery']?.CELERY_RESULT_BACKEND);
    expect(infra).toMatchObject({ queues: [QUEUES[1]], concurrency: 16, hostname: 'infrastructure@%h' });
    expect(worker.unknownTasks).toEqual(infra.unknownTasks);
    const forward = workerConfig(chartEnv({ worker: { unknownTasks: 'forward:celery' } }, 'worker'));
    expect(JSON.stringify(forward.unknownTasks)).toContain('celery');
  });

  test("Beat's command line and env load through Beat's own settings, its Redis from the beatRedis Secret", () => {
    const { argv, env } = containerProcess(chartEnv({}, 'beat'), SECRETS);
    expect(argv.slice(0, 2)).toEqual(['node', 'dist/beat/main.js']);
    const beat = loadConfig(BEAT_SETTINGS, env, argv.slice(2)).values;
    expect(beat).toMatchObject({ httpPort: 8080, operationalQueue: QUEUES[0], infrastructureQueue: QUEUES[1] });
    expect(beat.redisUrl).toBe(SECRETS['smarter-celery']?.CELERY_RESULT_BACKEND);
  });

  test('the container commands are the Dockerfile entry point and its CMD (docs/deployment.md)', () => {
    const docker = readFileSync('Dockerfile', 'utf8');
    expect(docker).toContain('ENTRYPOINT ["/usr/bin/tini", "--"]');
    expect(docker).toMatch(/^CMD \["node", "dist\/tasks\/main.js"\]$/m);
    expect(chartEnv({}, 'worker').command).toEqual(['/usr/bin/tini', '--', 'node', 'dist/tasks/main.js']);
    expect(chartEnv({}, 'worker-infrastructure').command).toEqual([
      '/usr/bin/tini',
      '--',
      'node',
      'dist/tasks/main.js',
    ]);
    expect(chartEnv({}, 'beat').command).toEqual(['/usr/bin/tini', '--', 'node', 'dist/beat/main.js']);
  });

  test('probes are HTTP on the health endpoints; the grace period is the warm-shutdown grace plus 30 s', () => {
    const objects = renderChart({ shutdownGrace: 120 });
    for (const [name, ready] of [
      ['smarter-worker', '/readyz'],
      ['smarter-worker-infrastructure', '/readyz'],
      ['smarter-beat', '/healthz'],
    ] as const) {
      const pod = podOf(of(objects, 'Deployment', name));
      const c = pod.containers[0];
      expect([name, c?.startupProbe?.httpGet, c?.livenessProbe?.httpGet, c?.readinessProbe?.httpGet]).toEqual([
        name,
        { path: '/healthz', port: 'http' },
        { path: '/healthz', port: 'http' },
        { path: ready, port: 'http' },
      ]);
      expect([name, pod.terminationGracePeriodSeconds]).toEqual([name, 150]);
    }
    expect(
      containerProcess(chartEnv({ shutdownGrace: 120 }, 'worker'), SECRETS).env.SMARTER_WORKER_SHUTDOWN_GRACE,
    ).toBe('120');
  });

  test('Beat runs one replica; every container non-root, read-only root filesystem, no privilege escalation', () => {
    const objects = rendering('defaults');
    expect(replicasOf(of(objects, 'Deployment', 'smarter-beat'))).toBe(1);
    for (const d of objects.filter((o) => o.kind === 'Deployment')) {
      const pod = podOf(d) as PodSpec & { securityContext?: Record<string, unknown> };
      expect([d.metadata.name, pod.securityContext]).toMatchObject([d.metadata.name, { runAsNonRoot: true }]);
      expect([d.metadata.name, pod.containers[0]?.securityContext]).toMatchObject([
        d.metadata.name,
        { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
      ]);
    }
  });

  test('the least RBAC: a namespaced Role (ingresses, certificates, secrets) bound to the only pod with a token', () => {
    for (const name of ['defaults', 'existing Secrets and ServiceAccount, IRSA, no result backend']) {
      const objects = rendering(name);
      expect(objects.some((o) => o.kind === 'ClusterRole' || o.kind === 'ClusterRoleBinding')).toBe(false);
      const role = of(objects, 'Role', 'smarter-infrastructure') as Manifest & {
        rules: Array<{ apiGroups: string[]; resources: string[]; verbs: string[] }>;
      };
      expect(role.rules.map((r) => `${r.apiGroups.join()}/${r.resources.join()}`)).toEqual([
        'networking.k8s.io/ingresses',
        'cert-manager.io/certificates',
        '/secrets',
      ]);
      expect(role.rules[2]?.verbs).not.toContain('create');
      const binding = of(objects, 'RoleBinding', 'smarter-infrastructure') as Manifest & {
        subjects: Array<{ kind: string; name: string; namespace: string }>;
      };
      const infra = podOf(of(objects, 'Deployment', 'smarter-worker-infrastructure'));
      expect(binding.subjects).toEqual([
        { kind: 'ServiceAccount', name: infra.serviceAccountName, namespace: 'smarter' },
      ]);
      expect(podOf(of(objects, 'Deployment', 'smarter-worker')).automountServiceAccountToken).toBe(false);
      expect(podOf(of(objects, 'Deployment', 'smarter-beat')).automountServiceAccountToken).toBe(false);
    }
    const existing = rendering('existing Secrets and ServiceAccount, IRSA, no result backend');
    expect(existing.some((o) => o.kind === 'ServiceAccount')).toBe(false);
    expect(podOf(of(existing, 'Deployment', 'smarter-worker-infrastructure')).serviceAccountName).toBe('smarter-infra');
  });

  test('existing Secrets: each credential read from the Secret and key named, AWS and app Secrets to both workers', () => {
    const values = MATRIX['existing Secrets and ServiceAccount, IRSA, no result backend'] as ChartValues;
    const secrets = {
      'platform-broker': { url: 'amqp://u:p@mq:5672//' },
      'platform-redis': { url: 'redis://r:6379/1' },
      'platform-mysql': { password: 'pw' },
      'platform-aws': { AWS_ACCESS_KEY_ID: 'AKIA', AWS_SECRET_ACCESS_KEY: 'secret' },
      'platform-app': { SMARTER_FERNET_ENCRYPTION_KEY: 'fernet' },
    };
    for (const d of ['worker', 'worker-infrastructure'] as const) {
      const c = chartEnv(values, d);
      const config = workerConfig(c, secrets);
      expect([d, config.brokerUrl, config.resultBackend]).toEqual([d, 'amqp://u:p@mq:5672//', '']);
      const { env } = containerProcess(c, secrets);
      expect([d, env.SMARTER_MYSQL_PASSWORD, env.AWS_ACCESS_KEY_ID, env.SMARTER_FERNET_ENCRYPTION_KEY]).toEqual([
        d,
        'pw',
        'AKIA',
        'fernet',
      ]);
    }
    const beat = containerProcess(chartEnv(values, 'beat'), secrets).env;
    expect(beat.SMARTER_BEAT_REDIS_URL).toBe('redis://r:6379/1');
    expect(beat.AWS_ACCESS_KEY_ID).toBeUndefined();
    // A Secret the chart names but the namespace lacks stops the pod, as the kubelet would.
    expect(() => containerProcess(chartEnv(values, 'worker'), SECRETS)).toThrow(/CreateContainerConfigError/);
  });

  test('RabbitMQ with TLS: the CA Secret mounted read-only in every container, where CELERY_BROKER_USE_SSL points', () => {
    const objects = rendering('RabbitMQ with TLS and a private CA');
    for (const d of objects.filter((o) => o.kind === 'Deployment')) {
      const pod = podOf(d);
      expect([d.metadata.name, pod.volumes?.find((v) => v.name === 'tls')?.secret]).toEqual([
        d.metadata.name,
        { secretName: 'smarter-broker-tls' },
      ]);
      expect([d.metadata.name, pod.containers[0]?.volumeMounts?.find((m) => m.name === 'tls')]).toEqual([
        d.metadata.name,
        { name: 'tls', mountPath: '/etc/smarter/tls', readOnly: true },
      ]);
    }
    for (const d of rendering('defaults').filter((o) => o.kind === 'Deployment')) {
      expect(podOf(d).volumes?.some((v) => v.name === 'tls')).toBe(false);
    }
    // The worker reads the CA when it loads its configuration: mount the Secret where the chart says, as the
    // kubelet does (its keys as files), and the env the chart renders finds it there.
    const mount = mkdtempSync(path.join(os.tmpdir(), 'chart-tls-'));
    try {
      writeFileSync(path.join(mount, 'ca.crt'), '-----BEGIN CERTIFICATE-----\nstand-in\n-----END CERTIFICATE-----\n');
      const values = {
        tls: { secretName: 'smarter-broker-tls', mountPath: mount },
        env: {
          CELERY_BROKER_USE_SSL: JSON.stringify({ ca_certs: `${mount}/ca.crt` }),
          CELERY_REDIS_BACKEND_USE_SSL: JSON.stringify({
            ssl_ca_certs: `${mount}/ca.crt`,
            ssl_cert_reqs: 'CERT_REQUIRED',
          }),
        },
      };
      for (const d of ['worker', 'worker-infrastructure'] as const) {
        const config = workerConfig(chartEnv(values, d));
        expect([d, config.brokerUseSsl, config.redisBackendUseSsl]).toMatchObject([
          d,
          { enabled: true, caFile: `${mount}/ca.crt`, certReqs: 'required' },
          { enabled: true, caFile: `${mount}/ca.crt`, certReqs: 'required' },
        ]);
      }
    } finally {
      rmSync(mount, { recursive: true, force: true });
    }
  });

  test('an HPA per worker on CPU by default; the autoscaler, not the Deployment, owns the replica count', () => {
    const objects = rendering('defaults');
    const hpas = objects.filter((o) => o.kind === 'HorizontalPodAutoscaler');
    expect(hpas.map((h) => (h.spec as { scaleTargetRef: { name: string } }).scaleTargetRef.name)).toEqual([
      'smarter-worker',
      'smarter-worker-infrastructure',
    ]);
    expect(replicasOf(of(objects, 'Deployment', 'smarter-worker'))).toBeUndefined();
    expect(replicasOf(of(objects, 'Deployment', 'smarter-worker-infrastructure'))).toBeUndefined();
    const fixed = rendering('workers only, no autoscaler, self-hosted settings');
    expect(fixed.some((o) => o.kind === 'HorizontalPodAutoscaler' || o.kind === 'ScaledObject')).toBe(false);
    expect(replicasOf(of(fixed, 'Deployment', 'smarter-worker'))).toBe(3);
    expect(of(fixed, 'Deployment', 'smarter-beat')).toBeUndefined();
  });

  test('KEDA replaces the HPAs: a ScaledObject per worker on its own queue, RabbitMQ or Redis', () => {
    type Scaled = {
      scaleTargetRef: { name: string };
      triggers: Array<{ type: string; metadata: Record<string, string> }>;
    };
    const triggers = (objects: Manifest[]): Array<Record<string, string | undefined>> =>
      objects
        .filter((o) => o.kind === 'ScaledObject')
        .map((o) => {
          const s = o.spec as Scaled;
          return { target: s.scaleTargetRef.name, type: s.triggers[0]?.type, ...s.triggers[0]?.metadata };
        });
    const rabbit = rendering('KEDA on RabbitMQ');
    expect(rabbit.some((o) => o.kind === 'HorizontalPodAutoscaler')).toBe(false);
    expect(triggers(rabbit)).toEqual([
      {
        target: 'smarter-worker',
        type: 'rabbitmq',
        protocol: 'http',
        mode: 'QueueLength',
        value: '50',
        queueName: QUEUES[0],
      },
      {
        target: 'smarter-worker-infrastructure',
        type: 'rabbitmq',
        protocol: 'http',
        mode: 'QueueLength',
        value: '50',
        queueName: QUEUES[1],
      },
    ]);
    const redis = rendering('Redis broker, KEDA on the queue lists');
    expect(triggers(redis).map((t) => [t.target, t.type, t.listName, t.listLength])).toEqual([
      ['smarter-worker', 'redis', QUEUES[0], '50'],
      ['smarter-worker-infrastructure', 'redis', QUEUES[1], '50'],
    ]);
    const auth = (objects: Manifest[]) =>
      (
        of(objects, 'TriggerAuthentication', 'smarter-keda')?.spec as { secretTargetRef: Array<{ parameter: string }> }
      ).secretTargetRef.map((r) => r.parameter);
    expect(auth(rabbit)).toEqual(['host']);
    expect(auth(redis)).toEqual(['address', 'password']);
  });

  test('the metrics Service and the ServiceMonitor select this release only', () => {
    const objects = rendering('monitoring and ServiceMonitor');
    const selector = (of(objects, 'ServiceMonitor', 'smarter')?.spec as { selector: { matchLabels: object } }).selector
      .matchLabels;
    expect(selector).toEqual({ 'app.kubernetes.io/component': 'metrics', 'app.kubernetes.io/instance': 'smarter' });
    expect(of(objects, 'Service', 'smarter-metrics')?.metadata.labels).toMatchObject(selector);
  });
});
