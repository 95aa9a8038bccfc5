/**
 * prom-client, loaded on first use: it and the modules it pulls in (@opentelemetry/api among them) cost
 * ~30 ms of a start-up, and only a process that serves /metrics needs them.
 */
import { createRequire } from 'node:module';
import type * as PromClientModule from 'prom-client';

type PromClient = typeof PromClientModule;

let loaded: PromClient | undefined;

export function promClient(): PromClient {
  return (loaded ??= createRequire(import.meta.url)('prom-client') as PromClient);
}
