/**
 * Tracing's switch and settings, read from the standard OpenTelemetry variables. Pure and cheap: it runs at
 * every start, and only its answer decides whether the SDK is loaded at all.
 */
import { ConfigError } from '../errors.js';

type Env = Readonly<Record<string, string | undefined>>;

/** Tracing is off unless the operator names an exporter: the worker sends nothing anywhere by default. */
export function tracingWanted(env: Env): boolean {
  if ((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true') return false;
  return exporterNames(env).includes('otlp');
}

function exporterNames(env: Env): string[] {
  return (env.OTEL_TRACES_EXPORTER ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s !== '');
}

export type OtlpProtocol = 'http/protobuf' | 'http/json';

/** `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`, else `OTEL_EXPORTER_OTLP_PROTOCOL`, else the spec's default. */
export function otlpProtocol(env: Env): OtlpProtocol {
  const given = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? '').trim().toLowerCase();
  if (given === '' || given === 'http/protobuf') return 'http/protobuf';
  if (given === 'http/json') return 'http/json';
  throw new ConfigError([
    `OTEL_EXPORTER_OTLP_PROTOCOL=${given} is not supported: use http/protobuf (the default) or http/json`,
  ]);
}

export interface SamplerSetting {
  /** `parentbased_*`: a message that carries a sampling decision keeps it. */
  parentBased: boolean;
  /** Share of new traces kept, 0 to 1. */
  ratio: number;
}

/** `OTEL_TRACES_SAMPLER` and `OTEL_TRACES_SAMPLER_ARG`, as the specification defines them. */
export function samplerSetting(env: Env): SamplerSetting {
  const name = (env.OTEL_TRACES_SAMPLER ?? '').trim().toLowerCase() || 'parentbased_always_on';
  const argText = (env.OTEL_TRACES_SAMPLER_ARG ?? '').trim();
  const arg = argText === '' ? 1 : Number(argText);
  const ratio = () => {
    if (!Number.isFinite(arg) || arg < 0 || arg > 1) {
      throw new ConfigError([`OTEL_TRACES_SAMPLER_ARG=${argText} is not a ratio between 0 and 1`]);
    }
    return arg;
  };
  switch (name) {
    case 'always_on':
      return { parentBased: false, ratio: 1 };
    case 'always_off':
      return { parentBased: false, ratio: 0 };
    case 'traceidratio':
      return { parentBased: false, ratio: ratio() };
    case 'parentbased_always_on':
      return { parentBased: true, ratio: 1 };
    case 'parentbased_always_off':
      return { parentBased: true, ratio: 0 };
    case 'parentbased_traceidratio':
      return { parentBased: true, ratio: ratio() };
    default:
      throw new ConfigError([
        `OTEL_TRACES_SAMPLER=${name} is not supported: use always_on, always_off, traceidratio or their parentbased_ forms`,
      ]);
  }
}

/** `OTEL_BSP_SCHEDULE_DELAY` (ms between exports), when given. */
export function scheduleDelayMs(env: Env): number | undefined {
  const n = Number((env.OTEL_BSP_SCHEDULE_DELAY ?? '').trim() || NaN);
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}

/** `messaging.system` of a broker URL: what OpenTelemetry calls RabbitMQ and Redis. */
export function messagingSystem(brokerUrl: string): string {
  const scheme = /^\s*([a-z][a-z0-9+.-]*):/i.exec(brokerUrl)?.[1]?.toLowerCase() ?? '';
  if (scheme.startsWith('redis') || scheme.startsWith('sentinel')) return 'redis';
  if (scheme.startsWith('amqp') || scheme === 'pyamqp' || scheme === 'librabbitmq') return 'rabbitmq';
  return scheme || 'unknown';
}
