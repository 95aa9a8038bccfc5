/** A RabbitMQ node's memory as `rabbitmq-diagnostics memory_breakdown` tells it, in MB. */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const exec = promisify(execFile);

/** Every part of the breakdown, plus `total`: what is in use (memory reserved but not allocated left out). */
export async function rabbitMemoryMb(node: string): Promise<Record<string, number>> {
  const { stdout } = await exec('rabbitmq-diagnostics', ['-n', node, 'memory_breakdown', '--unit', 'MB', '-q']);
  return memoryBreakdown(stdout);
}

/** The parse of memory_breakdown's text (pure). */
export function memoryBreakdown(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^(\w+): ([\d.]+) mb/gm)) if (m[1] && m[2]) out[m[1]] = Number(m[2]);
  out.total = Object.entries(out)
    .filter(([k]) => k !== 'reserved_unallocated' && k !== 'allocated_unused')
    .reduce((a, [, b]) => a + b, 0);
  return out;
}
