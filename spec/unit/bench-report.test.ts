import type { Sample } from '../../bench/record.js';
import { benchTable, renderReport } from '../../bench/report.js';

const s = (system: string, value: number, metric = 'seconds', x?: number): Sample => ({ bench: 'b', system, metric, unit: 's', value, ...(x === undefined ? {} : { x }) });

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
});
