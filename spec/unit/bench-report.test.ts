import { benchTable, mediansOfReport, mergeReport, renderReport } from '../../bench/report.js';
import { benchSample } from '../support/bench-sample.js';

const s = (system: string, value: number, metric = 'seconds', x?: number) =>
  benchSample('b', system, metric, 's', value, x);

describe('bench report writer', () => {
  it('prints one row per metric and system with the median, min – max, n and the ratio to the baseline', () => {
    const table = benchTable([s('ours', 2), s('base', 4), s('ours', 3), s('base', 4), s('ours', 1)], 'base');
    const lines = table.split('\n');
    expect(lines[0]).toBe('| metric | system | median | min – max | n | × base |');
    expect(lines[2]).toBe('| seconds (s) | ours | 2.00 | 1.00 – 3.00 | 3 | 0.50 |');
    expect(lines[3]).toBe('| seconds (s) | base | 4.00 | 4.00 – 4.00 | 2 | 1.00 |');
    expect(lines).toHaveLength(4);
  });

  it('keeps the x of a metric apart (a rate), and says n/a when the baseline did not run it', () => {
    const table = benchTable([s('ours', 1, 'p99', 100), s('ours', 5, 'p99', 1000), s('base', 2, 'p99', 100)], 'base');
    expect(table).toContain('| p99 @ 100 (s) | ours | 1.00 | 1.00 – 1.00 | 1 | 0.50 |');
    expect(table).toContain('| p99 @ 1000 (s) | ours | 5.00 | 5.00 – 5.00 | 1 | n/a |');
  });

  it('writes the machine, a section per benchmark (or "not run"), the note and links to the plots', () => {
    const md = renderReport({
      date: '2026-12-01',
      host: 'ci',
      machine: { CPU: 'EPYC', cores: '2' },
      note: 'a noisy quick run',
      benches: { b: { title: 'Throughput', baseline: 'base' }, c: { title: 'Start-up', baseline: 'x' } },
      samples: [s('base', 1)],
      plots: ['2026-12-01-ci-throughput.svg'],
    });
    expect(md).toMatch(/^# Benchmarks, 2026-12-01, ci\n/);
    expect(md).toContain('> a noisy quick run');
    expect(md).toContain('| CPU | EPYC |');
    expect(md).toContain('## Throughput\n\n| metric |');
    expect(md).toContain('## Start-up\n\n_not run_');
    expect(md).toContain('![2026-12-01-ci-throughput.svg](2026-12-01-ci-throughput.svg)');
  });

  it('--only: the sections it ran are new, every other one stays as the earlier run wrote it, and both notes are kept', () => {
    const benches = { b: { title: 'Throughput', baseline: 'base' }, c: { title: 'Start-up', baseline: 'x' } };
    const input = { date: '2026-12-01', host: 'ci', machine: { CPU: 'EPYC' }, benches, plots: ['p.svg'] };
    const old = renderReport({ ...input, note: 'the full run', samples: [s('base', 1), { ...s('x', 7), bench: 'c' }] });
    const fresh = renderReport({ ...input, note: '`--only b`: the partial run', samples: [s('base', 9)] });
    const md = mergeReport(old, fresh, ['Throughput']);
    expect(md).toContain('| seconds (s) | base | 9.00 |');
    expect(md).not.toContain('| seconds (s) | base | 1.00 |');
    expect(md).toContain('## Start-up\n\n| metric |');
    expect(md).toContain('| seconds (s) | x | 7.00 |');
    expect(md).not.toContain('_not run_');
    expect(md).toContain('> the full run\n>\n> `--only b`: the partial run\n');
    expect(md.match(/^## Plots$/gm)).toHaveLength(1);
    // Run again with the same --only: the same report, not one more copy of each note.
    expect(mergeReport(md, fresh, ['Throughput'])).toBe(md);
    // A later run of the same --only replaces its note; the full run's stays.
    const later = renderReport({ ...input, note: '`--only b`: the later run', samples: [s('base', 5)] });
    const again = mergeReport(md, later, ['Throughput']);
    expect(again).toContain('> the full run\n>\n> `--only b`: the later run\n');
    expect(again).not.toContain('the partial run');
  });
});

describe('mediansOfReport (bench/report.ts)', () => {
  it('reads back the medians a report prints, with their x, for the sections asked for only', () => {
    const samples = [s('ours', 2, 'tasks/s', 1000), s('ours', 4, 'tasks/s', 1000), s('base', 8, 'seconds')];
    const md = renderReport({
      date: '2026-12-04',
      host: 'h',
      machine: {},
      note: 'n',
      benches: { b: { title: 'Bee', baseline: 'base', note: '' }, c: { title: 'Sea', baseline: 'base', note: '' } },
      samples,
      plots: [],
    });
    expect(mediansOfReport(md, { b: 'Bee' })).toEqual([
      { bench: 'b', system: 'ours', metric: 'tasks/s', unit: 's', value: 3, x: 1000 },
      { bench: 'b', system: 'base', metric: 'seconds', unit: 's', value: 8 },
    ]);
    expect(mediansOfReport(md, { c: 'Sea' })).toEqual([]);
  });
});
