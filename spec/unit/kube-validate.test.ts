/**
 * spec/support/kube-validate.ts, the schema check of the Kubernetes stand-in and the chart suite: the schema of each
 * kind found by apiVersion and kind, failures named by field as an API server's 422 causes name them, object-meta
 * rules the schemas lack, and no kind passing unvalidated.
 */
import { invalidMessage, validateKubeObject } from '../support/kube-validate.js';

const deployment = (spec: Record<string, unknown>, metadata: Record<string, unknown> = { name: 'web' }) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata,
  spec: {
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx' }] } },
    ...spec,
  },
});

describe('validateKubeObject', () => {
  test('a valid object of each package passes: core, apps, networking, cert-manager, KEDA, Prometheus Operator, Traefik', () => {
    const objects = [
      deployment({ replicas: 2 }),
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, stringData: { a: 'b' } },
      {
        apiVersion: 'networking.k8s.io/v1',
        kind: 'Ingress',
        metadata: { name: 'a.example.com' },
        spec: { rules: [{ host: 'a.example.com' }] },
      },
      {
        apiVersion: 'cert-manager.io/v1',
        kind: 'Certificate',
        metadata: { name: 'c' },
        spec: { secretName: 'c', issuerRef: { name: 'letsencrypt' } },
      },
      {
        apiVersion: 'keda.sh/v1alpha1',
        kind: 'ScaledObject',
        metadata: { name: 'w' },
        spec: { scaleTargetRef: { name: 'w' }, triggers: [{ type: 'redis', metadata: { listName: 'q' } }] },
      },
      {
        apiVersion: 'monitoring.coreos.com/v1',
        kind: 'PrometheusRule',
        metadata: { name: 'r' },
        spec: { groups: [{ name: 'g', rules: [{ alert: 'A', expr: 'up == 0' }] }] },
      },
      { apiVersion: 'traefik.io/v1alpha1', kind: 'Middleware', metadata: { name: 'cors' }, spec: {} },
    ];
    for (const o of objects) expect([o.kind, validateKubeObject(o)]).toEqual([o.kind, { ok: true }]);
  });

  test('schema failures are named by field path, with the bodies of the API server field errors', () => {
    const r = validateKubeObject(
      deployment({
        replicas: 'two',
        template: {
          spec: {
            containers: [{ name: 'web', ports: [{ containerPort: 80, protocol: 'tcp' }], env: [{ value: 'x' }] }],
          },
        },
      }),
    );
    expect(r).toEqual({
      ok: false,
      errors: [
        {
          path: 'spec.replicas',
          message: 'Invalid value: "two": must be of type integer',
          reason: 'FieldValueTypeInvalid',
        },
        {
          path: 'spec.template.spec.containers[0].env[0].name',
          message: 'Required value',
          reason: 'FieldValueRequired',
        },
        {
          path: 'spec.template.spec.containers[0].ports[0].protocol',
          message: 'Unsupported value: "tcp": supported values: "SCTP", "TCP", "UDP"',
          reason: 'FieldValueNotSupported',
        },
      ],
    });
  });

  test('an int-or-string field of another type is one cause, not one per branch', () => {
    const r = validateKubeObject({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web' },
      spec: { ports: [{ port: 80, targetPort: { port: 8080 } }] },
    });
    expect(r).toEqual({
      ok: false,
      errors: [
        {
          path: 'spec.ports[0].targetPort',
          message: 'Invalid value: {"port":8080}: must be of type string or integer',
          reason: 'FieldValueTypeInvalid',
        },
      ],
    });
  });

  test('object meta: a name that is no DNS subdomain (a label for Services), bad label keys and values, a missing name', () => {
    const bad = validateKubeObject(
      deployment({}, { name: 'Web_1', labels: { 'a/b/c': 'x', app: 'not ok!', ['x'.repeat(64)]: 'y' } }),
    );
    expect(bad.ok ? [] : bad.errors.map((e) => [e.path, e.message])).toEqual([
      ['metadata.name', expect.stringContaining('"Web_1": a lowercase RFC 1123 subdomain')],
      ['metadata.labels', expect.stringContaining('"a/b/c": a qualified name')],
      ['metadata.labels', expect.stringContaining('"not ok!": a valid label')],
      ['metadata.labels', expect.stringContaining('name part must be no more than 63 characters')],
    ]);
    expect(
      validateKubeObject({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'a.b' }, spec: {} }),
    ).toMatchObject({
      ok: false,
      errors: [{ path: 'metadata.name' }],
    });
    expect(
      JSON.stringify(validateKubeObject({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'a.b' } })),
    ).toContain('a DNS-1035 label must consist of');
    expect(validateKubeObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: {} })).toMatchObject({
      ok: false,
      errors: [{ path: 'metadata.name', reason: 'FieldValueRequired' }],
    });
  });

  test('nothing passes unvalidated: an unknown kind, a part of a kind, a missing apiVersion, a path in the apiVersion', () => {
    for (const o of [
      { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } },
      { apiVersion: 'apps/v1', kind: 'DeploymentSpec', metadata: { name: 'w' } },
      { apiVersion: 'apps/v2', kind: 'Deployment', metadata: { name: 'w' } },
      { apiVersion: '../../../etc/v1', kind: 'Passwd', metadata: { name: 'w' } },
    ]) {
      expect([o.kind, validateKubeObject(o)]).toEqual([
        o.kind,
        { ok: false, errors: [expect.objectContaining({ path: 'kind', reason: 'FieldValueNotFound' })] },
      ]);
    }
    expect(validateKubeObject({ kind: 'Secret', metadata: { name: 's' } })).toMatchObject({
      ok: false,
      errors: [{ path: 'apiVersion' }],
    });
    expect(validateKubeObject('Secret')).toMatchObject({ ok: false });
  });

  test("invalidMessage words the Status message as apimachinery's NewInvalid: one cause bare, several in brackets", () => {
    const one = [{ path: 'spec.replicas', message: 'Required value', reason: 'FieldValueRequired' }];
    expect(invalidMessage('apps', 'Deployment', 'web', one)).toBe(
      'Deployment.apps "web" is invalid: spec.replicas: Required value',
    );
    expect(
      invalidMessage('', 'Secret', 's', [...one, { path: 'data', message: 'Too long', reason: 'FieldValueTooLong' }]),
    ).toBe('Secret "s" is invalid: [spec.replicas: Required value, data: Too long]');
  });
});
