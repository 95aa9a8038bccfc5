import { scaleSpec } from '../../bench/plots.js';
import { memoryBreakdown } from '../../bench/rabbit-memory.js';
import { cloneAmqpProperties, cloner } from '../../bench/clone.js';
import { goalsTable, scaleGoals } from '../../bench/scale-goals.js';
import { PARK_COUNT, SCALE_SIZES, scaleSteps } from '../../bench/scale-steps.js';
import { benchSample } from '../support/bench-sample.js';

const s = (bench: string, system: string, metric: string, value: number, x?: number) =>
  benchSample(bench, system, metric, 'u', value, x);

describe('raw publishing clones', () => {
  it('replaces every occurrence of each old string, and only them, per copy', () => {
    const clone = cloner('{"id":"A","root_id":"A","tag":"T","body":"xAx"}', ['A', 'T']);
    expect(clone(['1', '2'])).toBe('{"id":"1","root_id":"1","tag":"2","body":"x1x"}');
    expect(clone(['9', '8'])).toBe('{"id":"9","root_id":"9","tag":"8","body":"x9x"}');
  });

  it('leaves a text without the old strings as it is', () => {
    expect(cloner('nothing here', ['zz'])(['y'])).toBe('nothing here');
  });

  it("gives a cloned AMQP message the new task id in its id, root id and correlation id, keeping Celery's other headers", () => {
    const props = {
      contentType: 'application/json',
      correlationId: 'a',
      headers: { id: 'a', root_id: 'a', task: 't', eta: 'e' },
    };
    expect(cloneAmqpProperties(props, 'b')).toEqual({
      contentType: 'application/json',
      correlationId: 'b',
      headers: { id: 'b', root_id: 'b', task: 't', eta: 'e' },
    });
    expect(props.headers.id).toBe('a');
  });
});

describe('RabbitMQ memory breakdown', () => {
  it('sums what is in use, leaving out what is reserved but not allocated', () => {
    const m = memoryBreakdown(
      'code: 30.1 mb (20%)\nquorum_ets: 10.0 mb (5%)\nreserved_unallocated: 500.0 mb (50%)\nallocated_unused: 40 mb (4%)\n',
    );
    expect(m.code).toBe(30.1);
    expect(m.total).toBeCloseTo(40.1);
  });
});

describe('scale steps', () => {
  it('runs the default backlogs, parks 100k and times start-up with the largest backlog', () => {
    const steps = scaleSteps();
    expect(steps.map((x) => x.bench)).toEqual(['scale-rabbitmq', 'scale-redis', 'scale-park', 'scale-startup']);
    expect(steps[0]?.args).toEqual(['rabbitmq', SCALE_SIZES.join(','), '100000']);
    expect(steps[2]?.args).toEqual([String(PARK_COUNT)]);
    expect(steps[3]?.args[0]).toBe('1000000');
  });

  it('keeps a run at small sizes small: sorted backlogs, no more parked than the largest', () => {
    const steps = scaleSteps('5000,2000');
    expect(steps[1]?.args).toEqual(['redis', '2000,5000', '100000']);
    expect(steps[2]?.args).toEqual(['5000']);
    expect(steps[3]?.args[0]).toBe('5000');
    expect(scaleSteps('2000', '300')[2]?.args).toEqual(['300']);
  });

  it('refuses backlogs that are not positive whole numbers', () => {
    expect(() => scaleSteps('10k')).toThrow(/--sizes/);
    expect(() => scaleSteps('0')).toThrow(/--sizes/);
  });
});

describe('scale goals', () => {
  const drain = (bench: string, system: string, x: number, rate: number, rss = 100) => [
    s(bench, system, 'tasks/s', rate, x),
    s(bench, system, 'peak RSS', rss, x),
    s(bench, system, 'settled RSS', rss, x),
  ];
  const samples = [
    ...drain('scale-rabbitmq', 'smarter-worker', 10_000, 950, 100),
    ...drain('scale-rabbitmq', 'smarter-worker', 1_000_000, 850, 105),
    ...drain('scale-rabbitmq', 'bare consumer', 10_000, 1000),
    ...drain('scale-rabbitmq', 'bare consumer', 1_000_000, 1000),
    ...drain('scale-rabbitmq', 'python-celery -c 2', 10_000, 100),
    ...drain('scale-rabbitmq', 'python-celery -c 2', 100_000, 150),
    ...drain('scale-rabbitmq', 'smarter-worker', 100_000, 900),
    s('scale-startup', 'smarter-worker', 'start → first task', 300),
    s('scale-startup', 'smarter-worker', 'start → first task', 500),
    s('scale-startup', 'bare consumer', 'start → first task', 300),
  ];
  const goals = scaleGoals(samples);
  const find = (text: string) => goals.find((g) => g.goal.includes(text));

  it('compares the drain with the bare consumer at each backlog', () => {
    expect(find('RabbitMQ 10000: drain')).toEqual(expect.objectContaining({ measured: '0.95 ×', met: true }));
    expect(find('RabbitMQ 1000000: drain')).toEqual(expect.objectContaining({ measured: '0.85 ×', met: false }));
  });

  it('takes the ×Python goal at 100k, and says so when the run has no Python', () => {
    expect(find("RabbitMQ 100000: drain rate ≥ 5 × Python's")).toEqual(
      expect.objectContaining({ measured: '6.00 ×', met: true }),
    );
    expect(find("Redis 100000: drain rate ≥ 8 × Python's")?.met).toBeUndefined();
  });

  it('compares the RSS at the largest backlog with the smallest, and start-up medians with the bare consumer', () => {
    expect(find('RabbitMQ: peak RSS at 1000000 ≤ 1.1 × at 10000')).toEqual(
      expect.objectContaining({ measured: '1.05 ×', met: true }),
    );
    expect(find('start → first task')).toEqual(expect.objectContaining({ measured: '1.33 ×', met: true }));
  });

  it('prints unmet goals in bold and unmeasured ones as such', () => {
    const table = goalsTable(goals);
    expect(table).toContain('| **not met** |');
    expect(table).toContain('| not measured |');
  });
});

describe('scale plots', () => {
  it('draws one panel per broker, a point per system, metric and backlog', () => {
    const spec = scaleSpec(
      [
        s('scale-rabbitmq', 'a', 'tasks/s', 1, 10),
        s('scale-rabbitmq', 'a', 'tasks/s', 3, 10),
        s('scale-redis', 'a', 'tasks/s', 5, 10),
        s('scale-redis', 'a', 'peak RSS', 7, 10),
      ],
      ['tasks/s'],
      't',
      'y',
    );
    expect((spec as { data: { values: unknown[] } }).data.values).toEqual([
      { system: 'a', series: 'a tasks/s', x: 10, y: 2, broker: 'rabbitmq', metric: 'tasks/s' },
      { system: 'a', series: 'a tasks/s', x: 10, y: 5, broker: 'redis', metric: 'tasks/s' },
    ]);
  });
});
