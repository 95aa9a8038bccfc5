/** The report of `npm run bench`: the machine, then per benchmark a table of medians, min–max and ratios. */
import type { Sample } from './record.js';
import { ratio, summarize } from './stats.js';

export interface BenchInfo {
  title: string;
  /** The system the ratios are taken against. */
  baseline: string;
  note?: string;
}

export interface ReportInput {
  date: string;
  host: string;
  machine: Record<string, string>;
  note?: string;
  benches: Record<string, BenchInfo>;
  samples: Sample[];
  plots: string[];
}

const num = (x: number) => (!Number.isFinite(x) ? 'n/a' : Math.abs(x) >= 100 ? x.toFixed(0) : Math.abs(x) >= 10 ? x.toFixed(1) : x.toFixed(2));
const unique = <T>(xs: T[]) => [...new Set(xs)];

/** Rows keyed by metric and x (in first-seen order), then by system, each with its ratio to the baseline. */
export function benchTable(samples: Sample[], baseline: string): string {
  const lines = [`| metric | system | median | min – max | n | × ${baseline} |`, '|---|---|---:|---:|---:|---:|'];
  const keys = unique(samples.map((s) => `${s.metric}\u0000${s.x ?? ''}`));
  for (const key of keys) {
    const [metric = '', x = ''] = key.split('\u0000');
    const group = samples.filter((s) => s.metric === metric && String(s.x ?? '') === x);
    const unit = group[0]?.unit ?? '';
    const base = summarize(group.filter((s) => s.system === baseline).map((s) => s.value)).median;
    for (const system of unique(group.map((s) => s.system))) {
      const sum = summarize(group.filter((s) => s.system === system).map((s) => s.value));
      const label = `${metric}${x === '' ? '' : ` @ ${x}`} (${unit})`;
      lines.push(`| ${label} | ${system} | ${num(sum.median)} | ${num(sum.min)} – ${num(sum.max)} | ${sum.n} | ${num(ratio(sum.median, base))} |`);
    }
  }
  return lines.join('\n');
}

export function renderReport(r: ReportInput): string {
  const out = [`# Benchmarks, ${r.date}, ${r.host}`, ''];
  if (r.note) out.push(`> ${r.note}`, '');
  out.push('| machine | |', '|---|---|', ...Object.entries(r.machine).map(([k, v]) => `| ${k} | ${v} |`), '');
  for (const [id, info] of Object.entries(r.benches)) {
    const samples = r.samples.filter((s) => s.bench === id);
    out.push(`## ${info.title}`, '');
    if (info.note) out.push(info.note, '');
    out.push(samples.length ? benchTable(samples, info.baseline) : '_not run_', '');
  }
  if (r.plots.length) out.push('## Plots', '', ...r.plots.map((p) => `![${p}](${p})`), '');
  return out.join('\n');
}
