/**
 * The isolation benchmark (isolation.ts) under the CPU limits a cluster would give: RabbitMQ on a node of its own
 * pinned to core 0 (a broker pod on its own node), each worker in a cgroup with its Helm chart's CPU request
 * (shares) and limit (CFS quota) on core 1, the producers (Smarter's web app) outside them. Skips, saying why,
 * where cgroup v1 is not writable.
 *
 *   npm run build && node dist/bench/isolation-limits.js [rate=200] [seconds=15] [checks=2000]
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { cgroupsAvailable, cpuGroup } from './cgroups.js';
import { startRabbitNode } from './rabbit-node.js';

if (!cgroupsAvailable()) {
  process.stdout.write('isolation under limits: skipped, cgroup v1 cpu/cpuset are not writable here\n');
  process.exit(0);
}
const node = await startRabbitNode();
const broker = cpuGroup(`bench-broker-${process.pid}`, { request: 1, cpus: '0' });
try {
  const pid = Number((await node.ctl('eval', 'os:getpid().')).replace(/[^0-9]/g, ''));
  broker.add(pid);
  const child = spawn(process.execPath, ['dist/bench/isolation.js', ...process.argv.slice(2)], {
    env: {
      ...process.env,
      BENCH_AMQP_URL: node.url,
      BENCH_RABBIT_NODE: node.node,
      BENCH_LIMITS: '1',
      BENCH_SYSTEM_SUFFIX: ' (chart CPU limits)',
    },
    stdio: 'inherit',
  });
  const [code] = (await once(child, 'exit')) as [number | null];
  process.exitCode = code ?? 1;
} finally {
  await node.remove();
  broker.remove();
}
