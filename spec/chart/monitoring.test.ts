/**
 * The chart's alerts and dashboard (charts/smarter-worker/files/, templates/monitoring.yaml): the rules pass
 * `promtool check rules` and their unit tests on synthetic series (`promtool test rules`,
 * spec/fixtures/monitoring/alerts.test.yaml); every dashboard query is valid PromQL; `helm template` renders
 * neither by default and, with monitoring.enabled, a PrometheusRule holding the rules file unchanged and a
 * ConfigMap with Grafana's sidecar label holding the dashboard; every alert has its runbook entry.
 * That each metric queried is exported is proven against running processes (spec/integration/metrics-exported.test.ts).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import yaml from 'js-yaml';
import { CHART, type ChartValues, dashboardQueries, renderChart } from '../support/chart.js';

const PROMTOOL = process.env.PROMTOOL ?? 'promtool';
const RULES = `${CHART}/files/alerts.yaml`;
const DASHBOARD = `${CHART}/files/dashboard.json`;

interface Rule {
  alert?: string;
  expr: string;
}
const rules = yaml.load(readFileSync(RULES, 'utf8')) as { groups: Array<{ name: string; rules: Rule[] }> };
const alerts = rules.groups.flatMap((g) => g.rules).filter((r) => r.alert !== undefined);

function promtool(...args: string[]): string {
  try {
    return execFileSync(PROMTOOL, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`promtool ${args.join(' ')} failed:\n${e.stdout ?? ''}${e.stderr ?? e.message}`);
  }
}

describe('alerts (files/alerts.yaml)', () => {
  test('promtool check rules accepts them', () => {
    expect(promtool('check', 'rules', RULES)).toMatch(/SUCCESS: \d+ rules found/);
  });

  test('promtool test rules: each alert fires on its synthetic series and stays quiet on the healthy ones', () => {
    expect(promtool('test', 'rules', 'spec/fixtures/monitoring/alerts.test.yaml')).toContain('SUCCESS');
  });

  test('every alert is unit-tested and has a runbook entry (docs/runbook.md) its description links to', () => {
    const tests = readFileSync('spec/fixtures/monitoring/alerts.test.yaml', 'utf8');
    const runbook = readFileSync('docs/runbook.md', 'utf8');
    expect(alerts.length).toBeGreaterThanOrEqual(10);
    for (const a of alerts) {
      const name = a.alert ?? '';
      expect([name, tests.includes(`alertname: ${name}`)]).toEqual([name, true]);
      expect([name, runbook.includes(`### ${name}`)]).toEqual([name, true]);
      const description = (a as { annotations?: { description?: string } }).annotations?.description ?? '';
      expect([name, description.includes(`docs/runbook.md#${name.toLowerCase()}`)]).toEqual([name, true]);
    }
  });

  test('a broken rule is refused (the check is not a formality)', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'rules-'));
    try {
      writeFileSync(
        `${dir}/bad.yaml`,
        'groups:\n  - name: x\n    rules:\n      - alert: X\n        expr: sum by (queue (smarter_worker_ready)\n',
      );
      expect(() => promtool('check', 'rules', `${dir}/bad.yaml`)).toThrow(/promtool check rules .* failed/s);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('dashboard (files/dashboard.json)', () => {
  test('every panel query is valid PromQL (promtool checks them as recording rules)', () => {
    const queries = dashboardQueries();
    expect(queries.length).toBeGreaterThanOrEqual(15);
    const dir = mkdtempSync(path.join(os.tmpdir(), 'dash-'));
    try {
      const file = `${dir}/queries.yaml`;
      writeFileSync(
        file,
        yaml.dump({
          groups: [
            { name: 'dashboard', rules: queries.map((q, i) => ({ record: `dashboard:query_${i}`, expr: q.expr })) },
          ],
        }),
      );
      expect(promtool('check', 'rules', file)).toContain(`SUCCESS: ${queries.length} rules found`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('templates/monitoring.yaml, rendered by helm template', () => {
  const kinds = (values: ChartValues) =>
    renderChart(values)
      .filter((o) => o.kind === 'PrometheusRule' || o.metadata.name.endsWith('-dashboard'))
      .map((o) => o.kind);

  test('off by default: no PrometheusRule and no dashboard', () => {
    expect(kinds({})).toEqual([]);
  });

  test('monitoring.enabled: a PrometheusRule holding the rules file as it is, and the dashboard in a ConfigMap labelled grafana_dashboard "1"', () => {
    const objects = renderChart({ monitoring: { enabled: true, ruleLabels: { release: 'kube-prometheus-stack' } } });
    const rule = objects.find((o) => o.kind === 'PrometheusRule');
    const cm = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'smarter-dashboard');
    expect(rule?.metadata.labels).toMatchObject({
      release: 'kube-prometheus-stack',
      'app.kubernetes.io/instance': 'smarter',
    });
    expect(rule?.spec).toEqual(rules);
    expect(cm?.metadata.labels).toMatchObject({ grafana_dashboard: '1' });
    const data = cm?.data as Record<string, string> | undefined;
    expect(JSON.parse(data?.['smarter-worker.json'] ?? '')).toEqual(JSON.parse(readFileSync(DASHBOARD, 'utf8')));
  });

  test('alerts or the dashboard alone', () => {
    expect(kinds({ monitoring: { enabled: true, dashboard: false } })).toEqual(['PrometheusRule']);
    expect(kinds({ monitoring: { enabled: true, alerts: false } })).toEqual(['ConfigMap']);
  });
});
