import { jest } from '@jest/globals';
/** Tracing's switch and settings from the standard OTEL_* variables (lib/tracing/env.ts). */
import {
  messagingSystem,
  otlpProtocol,
  samplerSetting,
  scheduleDelayMs,
  tracingWanted,
} from '../../lib/tracing/env.js';
import { createLogger, setLineFields } from '../../lib/logger.js';

describe('tracingWanted', () => {
  test('off by default: no exporter named, nothing loaded', () => {
    expect(tracingWanted({})).toBe(false);
    expect(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(false);
    expect(tracingWanted({ OTEL_TRACES_EXPORTER: 'none' })).toBe(false);
  });

  test('on with OTEL_TRACES_EXPORTER=otlp, unless OTEL_SDK_DISABLED=true', () => {
    expect(tracingWanted({ OTEL_TRACES_EXPORTER: 'otlp' })).toBe(true);
    expect(tracingWanted({ OTEL_TRACES_EXPORTER: ' console, OTLP ' })).toBe(true);
    expect(tracingWanted({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'true' })).toBe(false);
  });
});

describe('samplerSetting', () => {
  test("the specification's default: parent-based, always on", () => {
    expect(samplerSetting({})).toEqual({ parentBased: true, ratio: 1 });
  });

  test.each([
    ['always_on', undefined, { parentBased: false, ratio: 1 }],
    ['always_off', undefined, { parentBased: false, ratio: 0 }],
    ['traceidratio', '0.25', { parentBased: false, ratio: 0.25 }],
    ['parentbased_always_off', undefined, { parentBased: true, ratio: 0 }],
    ['parentbased_traceidratio', '0.1', { parentBased: true, ratio: 0.1 }],
    ['traceidratio', undefined, { parentBased: false, ratio: 1 }],
  ])('%s with arg %s', (name, arg, expected) => {
    expect(samplerSetting({ OTEL_TRACES_SAMPLER: name, OTEL_TRACES_SAMPLER_ARG: arg })).toEqual(expected);
  });

  test('an unknown sampler or a ratio out of range is a configuration error that names the variable', () => {
    expect(() => samplerSetting({ OTEL_TRACES_SAMPLER: 'jaeger_remote' })).toThrow(/OTEL_TRACES_SAMPLER=jaeger_remote/);
    expect(() => samplerSetting({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '2' })).toThrow(
      /OTEL_TRACES_SAMPLER_ARG=2/,
    );
  });
});

test('otlpProtocol: http/protobuf by default, http/json on request, grpc refused with the way out', () => {
  expect(otlpProtocol({})).toBe('http/protobuf');
  expect(otlpProtocol({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })).toBe('http/json');
  expect(
    otlpProtocol({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' }),
  ).toBe('http/protobuf');
  expect(() => otlpProtocol({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(/use http\/protobuf/);
});

test('scheduleDelayMs reads OTEL_BSP_SCHEDULE_DELAY', () => {
  expect(scheduleDelayMs({})).toBeUndefined();
  expect(scheduleDelayMs({ OTEL_BSP_SCHEDULE_DELAY: '250' })).toBe(250);
  expect(scheduleDelayMs({ OTEL_BSP_SCHEDULE_DELAY: 'soon' })).toBeUndefined();
});

test.each([
  ['amqp://guest:guest@rabbit:5672//', 'rabbitmq'],
  ['amqps://u:p@rabbit//', 'rabbitmq'],
  ['pyamqp://rabbit//', 'rabbitmq'],
  ['redis://redis:6379/0', 'redis'],
  ['rediss://redis:6380/0', 'redis'],
  ['sentinel://s1:26379;sentinel://s2:26379', 'redis'],
])('messagingSystem(%s) is %s', (url, system) => {
  expect(messagingSystem(url)).toBe(system);
});

test('log lines carry the fields tracing adds at the moment they are logged, and none once it stops', () => {
  const lines: string[] = [];
  const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  });
  try {
    const log = createLogger({ level: 'info', json: true }).child({ task: 't' });
    let span = 'a';
    setLineFields(() => ({ trace_id: 'f'.repeat(32), span_id: span }));
    log.info('one');
    span = 'b';
    log.info('two', { span_id: 'own' });
    setLineFields(undefined);
    log.info('three');
  } finally {
    write.mockRestore();
    setLineFields(undefined);
  }
  const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  expect(parsed[0]).toMatchObject({ message: 'one', trace_id: 'f'.repeat(32), span_id: 'a', task: 't' });
  // The active span's ids win: they say where the line was logged.
  expect(parsed[1]).toMatchObject({ message: 'two', span_id: 'b' });
  expect(parsed[2]).not.toHaveProperty('trace_id');
});
