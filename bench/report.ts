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
  /** Sections of their own after the benchmarks' (the scale run's goals). */
  extra?: Array<{ title: string; body: string }>;
}

const num = (x: number) =>
  !Number.isFinite(x) ? 'n/a' : Math.abs(x) >= 100 ? x.toFixed(0) : Math.abs(x) >= 10 ? x.toFixed(1) : x.toFixed(2);
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
      lines.push(
        `| ${label} | ${system} | ${num(sum.median)} | ${num(sum.min)} – ${num(sum.max)} | ${sum.n} | ${num(ratio(sum.median, base))} |`,
      );
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
  for (const e of r.extra ?? []) out.push(`## ${e.title}`, '', e.body, '');
  if (r.plots.length) out.push('## Plots', '', ...r.plots.map((p) => `![${p}](${p})`), '');
  return out.join('\n');
}

interface ReportParts {
  /** The title, notes and machine table: everything before the first section. */
  head: string[];
  /** `## ` sections in order: the heading's title, and the section's lines (heading included). */
  sections: Array<{ title: string; lines: string[] }>;
}

function partsOf(md: string): ReportParts {
  const parts: ReportParts = { head: [], sections: [] };
  for (const line of md.split('\n')) {
    if (line.startsWith('## ')) parts.sections.push({ title: line.slice(3), lines: [line] });
    else (parts.sections.at(-1)?.lines ?? parts.head).push(line);
  }
  return parts;
}

/**
 * A run of some benchmarks only (`--only`) written over the report already there: the sections of the
 * benchmarks it ran (`ran`, their titles) are the fresh report's, every other section stays as it was, and
 * the earlier notes stay above this run's (each says what its run was). The machine table is this run's.
 */
export function mergeReport(old: string, fresh: string, ran: readonly string[]): string {
  const o = partsOf(old);
  const f = partsOf(fresh);
  const kept = new Map(o.sections.map((s) => [s.title, s.lines]));
  // An earlier run of the same `--only` is replaced: its figures are gone from the sections.
  const only = (note: string) => /^> (`--only [^`]*`):/.exec(note)?.[1] ?? note;
  const oldNotes = o.head.filter((l) => l.startsWith('> '));
  const head = f.head.flatMap((l) =>
    l.startsWith('> ') ? [...oldNotes.filter((n) => only(n) !== only(l)).flatMap((n) => [n, '>']), l] : [l],
  );
  const sections = f.sections.flatMap((s) =>
    ran.includes(s.title) || s.title === 'Plots' ? s.lines : (kept.get(s.title) ?? s.lines),
  );
  return [...head, ...sections].join('\n');
}

/**
 * The medians a report's tables print, as one sample each, for the benchmarks whose section titles are given:
 * what `--only` keeps of an earlier run, enough to draw the plots and judge the goals (both read medians).
 */
export function mediansOfReport(md: string, titles: Readonly<Record<string, string>>): Sample[] {
  const byTitle = new Map(Object.entries(titles).map(([bench, title]) => [title, bench]));
  const out: Sample[] = [];
  let bench: string | undefined;
  for (const line of md.split('\n')) {
    if (line.startsWith('## ')) {
      bench = byTitle.get(line.slice(3));
      continue;
    }
    const m = /^\| (.+?)(?: @ ([\d.]+))? \((.+?)\) \| (.+?) \| ([\d.]+) \|/.exec(line);
    if (bench === undefined || !m) continue;
    const [, metric = '', x, unit = '', system = '', value = ''] = m;
    out.push({ bench, system, metric, unit, value: Number(value), ...(x === undefined ? {} : { x: Number(x) }) });
  }
  return out;
}
