/**
 * Renders a template of charts/smarter-worker without helm (this machine has none): the subset of Go templates
 * and Sprig the monitoring template uses: whitespace trimming, comments, `if`/`with`/`end`, `include` of the
 * chart's name and labels, `.Files.Get`, `toYaml`, `indent`/`nindent`. Anything else throws, so a template
 * that grows past the subset fails its test rather than render wrong.
 */
import { readFileSync } from 'node:fs';
import yaml from 'js-yaml';

export const CHART = 'charts/smarter-worker';

type Scope = unknown;

function lookup(path: string, root: Record<string, unknown>, dot: Scope): unknown {
  if (path === '.') return dot;
  let v: unknown = root;
  for (const part of path.split('.').slice(1)) {
    v = v && typeof v === 'object' ? (v as Record<string, unknown>)[part] : undefined;
  }
  return v;
}

const truthy = (v: unknown) =>
  !(
    v === undefined ||
    v === null ||
    v === false ||
    v === '' ||
    v === 0 ||
    (typeof v === 'object' && Object.keys(v).length === 0)
  );
const indent = (n: number, s: string) =>
  s
    .split('\n')
    .map((l) => ' '.repeat(n) + l)
    .join('\n');

export function renderTemplate(file: string, values: Record<string, unknown>, release = 'smarter'): string {
  const chart = yaml.load(readFileSync(`${CHART}/Chart.yaml`, 'utf8')) as { name: string; version: string };
  const labels = `app.kubernetes.io/part-of: smarter\napp.kubernetes.io/instance: ${release}\napp.kubernetes.io/application-group: smarter\napp.kubernetes.io/managed-by: Helm\nhelm.sh/chart: ${chart.name}-${chart.version}`;
  const root: Record<string, unknown> = { Values: values, Release: { Name: release } };
  let text = readFileSync(`${CHART}/templates/${file}`, 'utf8');
  // Trim markers: `{{-` eats the whitespace before, `-}}` the whitespace after.
  text = text.replace(/\s*\{\{-\s/g, '{{ ').replace(/\s-\}\}\s*/g, ' }}');
  const tokens = text.split(/(\{\{.*?\}\})/s);
  const out: string[] = [];
  const stack: Array<{ emit: boolean; dot: Scope }> = [{ emit: true, dot: root }];
  for (const tok of tokens) {
    const top = stack[stack.length - 1]!;
    const m = /^\{\{\s*(.*?)\s*\}\}$/s.exec(tok);
    if (!m) {
      if (top.emit) out.push(tok);
      continue;
    }
    const action = m[1]!;
    if (action.startsWith('/*')) continue;
    let b: RegExpExecArray | null;
    if ((b = /^(if|with) (\.[\w.]+)$/.exec(action))) {
      const v = lookup(b[2]!, root, top.dot);
      stack.push({ emit: top.emit && truthy(v), dot: b[1] === 'with' ? v : top.dot });
    } else if (action === 'end') {
      stack.pop();
    } else if (!top.emit) {
      continue;
    } else if (action === 'include "sw.name" .') {
      out.push(release);
    } else if ((b = /^include "sw\.labels" \. \| nindent (\d+)$/.exec(action))) {
      out.push('\n' + indent(Number(b[1]), labels));
    } else if ((b = /^\.Files\.Get "([^"]+)" \| indent (\d+)$/.exec(action))) {
      out.push(indent(Number(b[2]), readFileSync(`${CHART}/${b[1]}`, 'utf8').replace(/\n$/, '')));
    } else if ((b = /^toYaml \. \| nindent (\d+)$/.exec(action))) {
      out.push('\n' + indent(Number(b[1]), yaml.dump(top.dot).replace(/\n$/, '')));
    } else {
      throw new Error(`renderTemplate: ${file} uses {{ ${action} }}, which this renderer does not know`);
    }
  }
  return out.join('');
}

/** The chart's values.yaml with `overrides` merged in (one level deep per key, as `--set a.b=c` would). */
export function chartValues(overrides: Record<string, Record<string, unknown>> = {}): Record<string, unknown> {
  const values = yaml.load(readFileSync(`${CHART}/values.yaml`, 'utf8')) as Record<string, Record<string, unknown>>;
  for (const [k, v] of Object.entries(overrides)) values[k] = { ...values[k], ...v };
  return values;
}

interface Panel {
  title: string;
  targets?: Array<{ expr: string }>;
}

/** The PromQL of every panel of the chart's dashboard. */
export function dashboardQueries(): Array<{ panel: string; expr: string }> {
  const d = JSON.parse(readFileSync(`${CHART}/files/dashboard.json`, 'utf8')) as { panels: Panel[] };
  return d.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })));
}

/** The expression of every rule of the chart's alerts. */
export function alertExpressions(): Array<{ alert: string; expr: string }> {
  const r = yaml.load(readFileSync(`${CHART}/files/alerts.yaml`, 'utf8')) as {
    groups: Array<{ rules: Array<{ alert?: string; record?: string; expr: string }> }>;
  };
  return r.groups.flatMap((g) => g.rules.map((x) => ({ alert: x.alert ?? x.record ?? '', expr: x.expr })));
}

/** The smarter_* metric names a PromQL expression reads. */
export function metricNames(expr: string): string[] {
  return [...new Set(expr.match(/\bsmarter_[a-z0-9_]+/g) ?? [])];
}
