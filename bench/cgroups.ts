/**
 * CPU limits as a cluster gives them, emulated with cgroup v1 `cpu` (shares for requests, CFS quota for limits)
 * and `cpuset` (which cores), for benchmarks that must run deployments the way Kubernetes would. Needs root
 * and cgroup v1 mounted at /sys/fs/cgroup (this machine and CI have both).
 */
import fs from 'node:fs';
import path from 'node:path';

const ROOT = '/sys/fs/cgroup';

export interface CpuLimit {
  /** Kubernetes `requests.cpu` in cores: cpu.shares = 1024 × cores, as the kubelet sets them. */
  request: number;
  /** Kubernetes `limits.cpu` in cores: a CFS quota of cores × 100 ms per 100 ms period. */
  limit?: number;
  /** Cores the group may run on, e.g. "1" or "0-1". */
  cpus?: string;
}

export interface CpuGroup {
  readonly name: string;
  /** The command line that runs `cmd` inside the group (the shell enters it, then execs). */
  wrap(cmd: string, args: string[]): [string, string[]];
  add(pid: number): void;
  remove(): void;
}

export function cgroupsAvailable(): boolean {
  try {
    fs.accessSync(path.join(ROOT, 'cpu', 'cpu.shares'), fs.constants.W_OK);
    fs.accessSync(path.join(ROOT, 'cpuset', 'cpuset.cpus'), fs.constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

export function cpuGroup(name: string, limit: CpuLimit): CpuGroup {
  const cpu = path.join(ROOT, 'cpu', name);
  const cpuset = path.join(ROOT, 'cpuset', name);
  fs.mkdirSync(cpu, { recursive: true });
  fs.mkdirSync(cpuset, { recursive: true });
  fs.writeFileSync(path.join(cpu, 'cpu.shares'), String(Math.max(2, Math.round(1024 * limit.request))));
  fs.writeFileSync(path.join(cpu, 'cpu.cfs_period_us'), '100000');
  fs.writeFileSync(
    path.join(cpu, 'cpu.cfs_quota_us'),
    limit.limit === undefined ? '-1' : String(Math.round(limit.limit * 100_000)),
  );
  // A cpuset must name its memory nodes before it can take a task.
  fs.writeFileSync(
    path.join(cpuset, 'cpuset.mems'),
    fs.readFileSync(path.join(ROOT, 'cpuset', 'cpuset.mems'), 'utf8').trim(),
  );
  fs.writeFileSync(
    path.join(cpuset, 'cpuset.cpus'),
    limit.cpus ?? fs.readFileSync(path.join(ROOT, 'cpuset', 'cpuset.cpus'), 'utf8').trim(),
  );
  return {
    name,
    wrap: (cmd, args) => [
      'sh',
      ['-c', `echo $$ > ${cpu}/tasks && echo $$ > ${cpuset}/tasks && exec "$0" "$@"`, cmd, ...args],
    ],
    add(pid) {
      // Every thread of the process: a cgroup v1 `tasks` file takes thread ids.
      for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
        fs.writeFileSync(path.join(cpu, 'tasks'), tid);
        fs.writeFileSync(path.join(cpuset, 'tasks'), tid);
      }
    },
    remove() {
      for (const dir of [cpu, cpuset]) {
        // Its tasks go back to the root group first; rmdir fails (EBUSY) on a group that still has any, and a
        // process still alive in it can start a thread meanwhile: move and try again until it is empty.
        for (let attempt = 1; ; attempt++) {
          for (const tid of fs.readFileSync(path.join(dir, 'tasks'), 'utf8').split('\n').filter(Boolean)) {
            try {
              fs.writeFileSync(path.join(path.dirname(dir), 'tasks'), tid);
            } catch {
              // exited meanwhile
            }
          }
          try {
            fs.rmdirSync(dir);
            break;
          } catch (err) {
            if ((err as NodeJS.ErrnoException).code !== 'EBUSY' || attempt >= 50) throw err;
            Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
          }
        }
      }
    },
  };
}
