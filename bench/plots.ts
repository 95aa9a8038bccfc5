/** The report's plots: Vega-Lite specs built from the samples (pure), rendered headless to SVG by Vega. */
import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import type { Sample } from './record.js';
import { median } from './stats.js';

interface Point {
  system: string;
  series: string;
  x: number | string;
  y: number;
}

/** One point per (system, metric, x): the median of its repetitions. */
export function medians(samples: Sample[]): Point[] {
  const groups = new Map<string, Sample[]>();
  for (const s of samples) {
    const key = JSON.stringify([s.system, s.metric, s.x ?? null]);
    groups.set(key, [...(groups.get(key) ?? []), s]);
  }
  return [...groups.values()].map((g) => {
    const first = g[0] as Sample;
    return {
      system: first.system,
      series: `${first.system} ${first.metric}`,
      x: first.x ?? first.metric,
      y: median(g.map((s) => s.value)),
    };
  });
}

/** Bars: tasks/s per system. */
export function throughputSpec(samples: Sample[]): TopLevelSpec {
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    title: 'Drain throughput (median tasks/s)',
    width: 360,
    height: 200,
    data: { values: medians(samples.filter((s) => s.metric === 'tasks/s')) },
    mark: 'bar',
    encoding: {
      y: { field: 'system', type: 'nominal', sort: '-x', title: null },
      x: { field: 'y', type: 'quantitative', title: 'tasks/s' },
    },
  };
}

/** Lines: each system's latency percentile against the publish rate, one panel per percentile. */
export function latencySpec(samples: Sample[]): TopLevelSpec {
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    title: 'Latency percentiles per rate (median of repetitions, ms)',
    data: { values: medians(samples).map((p) => ({ ...p, metric: p.series.slice(p.system.length + 1) })) },
    facet: { column: { field: 'metric', type: 'nominal', title: null } },
    spec: {
      width: 180,
      height: 180,
      mark: { type: 'line', point: true },
      encoding: {
        x: { field: 'x', type: 'ordinal', title: 'tasks/s' },
        y: { field: 'y', type: 'quantitative', title: 'ms', scale: { type: 'log' } },
        color: { field: 'system', type: 'nominal' },
      },
    },
  };
}

/** Lines: operational p99 against the number of infrastructure checks waiting, per system. */
export function isolationSpec(samples: Sample[]): TopLevelSpec {
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    title: 'Operational p99 vs waiting deployments (checks)',
    width: 360,
    height: 200,
    data: { values: medians(samples.filter((s) => s.metric === 'ops p99')) },
    mark: { type: 'line', point: true },
    encoding: {
      x: { field: 'x', type: 'quantitative', title: 'checks waiting' },
      y: { field: 'y', type: 'quantitative', title: 'p99 ms' },
      color: { field: 'system', type: 'nominal' },
    },
  };
}

export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: 'none' });
  return view.toSVG();
}

/**
 * Lines against the backlog (log scale), one panel per broker (the sample's bench, `scale-<broker>`), a colour
 * per system and a dash per metric: the scale benchmark's rate and RSS plots.
 */
export function scaleSpec(samples: Sample[], metrics: readonly string[], title: string, yTitle: string): TopLevelSpec {
  const brokers = [...new Set(samples.map((s) => s.bench))];
  const values = brokers.flatMap((bench) =>
    medians(samples.filter((s) => s.bench === bench && metrics.includes(s.metric))).map((p) => ({
      ...p,
      broker: bench.replace(/^scale-/, ''),
      metric: p.series.slice(p.system.length + 1),
    })),
  );
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    title,
    data: { values },
    facet: { column: { field: 'broker', type: 'nominal', title: null } },
    spec: {
      width: 220,
      height: 200,
      mark: { type: 'line', point: true },
      encoding: {
        x: { field: 'x', type: 'quantitative', title: 'backlog (messages)', scale: { type: 'log' } },
        y: { field: 'y', type: 'quantitative', title: yTitle },
        color: { field: 'system', type: 'nominal' },
        strokeDash: { field: 'metric', type: 'nominal' },
      },
    },
  };
}
