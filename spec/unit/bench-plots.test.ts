import type { Sample } from '../../bench/record.js';
import { isolationSpec, latencySpec, medians, renderSvg, throughputSpec } from '../../bench/plots.js';

const s = (system: string, metric: string, value: number, x?: number): Sample => ({
  bench: 'b',
  system,
  metric,
  unit: 'ms',
  value,
  ...(x === undefined ? {} : { x }),
});
const values = (spec: object) =>
  (spec as { data: { values: { system: string; x: unknown; y: number }[] } }).data.values;

describe('bench plot specs', () => {
  it('plots one point per system, metric and x: the median of the repetitions', () => {
    const points = medians([
      s('a', 'p99', 1, 100),
      s('a', 'p99', 3, 100),
      s('a', 'p99', 2, 100),
      s('a', 'p99', 9, 1000),
    ]);
    expect(points).toEqual([
      { system: 'a', series: 'a p99', x: 100, y: 2 },
      { system: 'a', series: 'a p99', x: 1000, y: 9 },
    ]);
  });

  it('throughput takes only tasks/s, one bar per system', () => {
    const spec = throughputSpec([
      s('ours', 'tasks/s', 10),
      s('ours', 'tasks/s', 20),
      s('ours', 'seconds', 1),
      s('bare', 'tasks/s', 30),
    ]);
    expect(values(spec).map((p) => [p.system, p.y])).toEqual([
      ['ours', 15],
      ['bare', 30],
    ]);
    expect(spec).toMatchObject({ mark: 'bar' });
  });

  it('latency has a panel per percentile with a line per system over the rates', () => {
    const spec = latencySpec([
      s('ours', 'start p99', 2, 100),
      s('py', 'start p99', 8, 100),
      s('ours', 'result p50', 1, 1000),
    ]);
    expect(values(spec)).toContainEqual(expect.objectContaining({ system: 'py', metric: 'start p99', x: 100, y: 8 }));
    expect(values(spec)).toContainEqual(expect.objectContaining({ system: 'ours', metric: 'result p50', x: 1000 }));
    expect(spec).toMatchObject({ facet: { column: { field: 'metric' } } });
  });

  it('isolation plots operational p99 against the checks waiting, and nothing else', () => {
    const spec = isolationSpec([s('ours', 'ops p99', 2, 0), s('ours', 'ops p99', 5, 2000), s('ours', 'ops p50', 1, 0)]);
    expect(values(spec).map((p) => [p.x, p.y])).toEqual([
      [0, 2],
      [2000, 5],
    ]);
  });

  it('renders a spec to an SVG headless, with the systems named in it', async () => {
    const svg = await renderSvg(
      throughputSpec([s('smarter-worker', 'tasks/s', 5000), s('python-celery', 'tasks/s', 1500)]),
    );
    expect(svg).toMatch(/^<svg[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    expect(svg).toContain('smarter-worker');
    expect(svg).toContain('python-celery');
  });
});
