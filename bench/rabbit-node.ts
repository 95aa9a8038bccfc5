/**
 * A RabbitMQ node of its own for a test or a benchmark (Debian's rabbitmq-server under another node name, on free ports, with its
 * data in a temporary directory), so that a test may stop, restart or cluster it without touching the shared
 * broker on 5672 that every other test uses. Start-up takes 5–15 s.
 */
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

export interface RabbitNodeOptions {
  /** Short node name; the node is `<name>@localhost`. Unique by default. */
  name?: string;
  /** Extra lines of rabbitmq.conf (TLS listeners, consumer_timeout, …). */
  config?: string;
}

export interface RabbitNode {
  readonly node: string;
  readonly port: number;
  /** amqp://guest:guest@127.0.0.1:<port>/ (guest may log in from loopback). */
  readonly url: string;
  readonly dir: string;
  /** The node's Erlang VM, from its pid file (a stop and start gives a new one); undefined while it has none. */
  pid(): number | undefined;
  /** rabbitmqctl against this node; resolves to its stdout. */
  ctl(...args: string[]): Promise<string>;
  /** Stops the node's Erlang VM (a full stop) and waits for it. */
  stop(): Promise<void>;
  /** Starts it again on the same ports and data. */
  start(): Promise<void>;
  /** Makes this node a member of `other`'s cluster (stop_app, reset, join_cluster, start_app). */
  join(other: RabbitNode): Promise<void>;
  /** Stops the node and deletes its data. */
  remove(): Promise<void>;
  /** The lines of the node's logs that match. */
  logLines(pattern: RegExp): string[];
}

/** Each log file of a node (under RABBITMQ_LOG_BASE) and its lines; undefined while it has no log directory. */
function logFiles(dir: string): Array<[string, string[]]> | undefined {
  const logDir = path.join(dir, 'log');
  let names: string[];
  try {
    names = fs.readdirSync(logDir).filter((n) => n.endsWith('.log'));
  } catch {
    return undefined;
  }
  return names.map((n) => [n, fs.readFileSync(path.join(logDir, n), 'utf8').trimEnd().split('\n').filter(Boolean)]);
}

/** A node's log lines that say why it did not start: its errors, then its last lines. */
function logTail(dir: string): string {
  const files = logFiles(dir);
  if (!files) return '(no log directory)';
  const tails = files.flatMap(([n, lines]) => {
    if (lines.length === 0) return [];
    const errors = lines.filter((l) => /\[(error|critical|alert|emergency)\]/.test(l)).slice(0, 10);
    return [`${n}:\n${[...errors, '…', ...lines.slice(-5)].join('\n')}`];
  });
  return tails.join('\n') || '(no log lines)';
}

/**
 * A first start that fails is tried once more, on new ports, in a new directory and (unless the options name it)
 * under a new name: the ports come from the kernel's ephemeral range, and a connection made between the probe and
 * the VM's bind can take one. The error of a second failure carries both logs' tails.
 */
export async function startRabbitNode(options: RabbitNodeOptions = {}): Promise<RabbitNode> {
  try {
    return await launchRabbitNode(options);
  } catch (first) {
    process.stderr.write(`${String(first)}\nstarting a RabbitMQ node again, on new ports\n`);
    return await launchRabbitNode(options).catch((second: unknown) => {
      throw new Error(`${String(second)}\n(first try: ${String(first)})`);
    });
  }
}

async function launchRabbitNode(options: RabbitNodeOptions): Promise<RabbitNode> {
  const short = options.name ?? `t${randomBytes(4).toString('hex')}`;
  const node = `${short}@localhost`;
  const port = await freePort();
  const distPort = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `rabbit-${short}-`));
  const conf = [`listeners.tcp.default = 127.0.0.1:${port}`, 'loopback_users = none', options.config ?? ''].join('\n');
  fs.writeFileSync(path.join(dir, 'rabbitmq.conf'), `${conf}\n`);
  fs.writeFileSync(path.join(dir, 'enabled_plugins'), '[].\n');
  // Debian's wrapper runs the server as the rabbitmq user: it must own what the node writes.
  await run('chown', ['-R', 'rabbitmq:rabbitmq', dir]).catch(() => undefined);
  const pidFile = path.join(dir, 'pid');
  const env = {
    ...process.env,
    RABBITMQ_NODENAME: node,
    RABBITMQ_NODE_PORT: String(port),
    RABBITMQ_DIST_PORT: String(distPort),
    RABBITMQ_MNESIA_BASE: path.join(dir, 'mnesia'),
    RABBITMQ_LOG_BASE: path.join(dir, 'log'),
    RABBITMQ_PID_FILE: pidFile,
    RABBITMQ_ENABLED_PLUGINS_FILE: path.join(dir, 'enabled_plugins'),
    RABBITMQ_CONFIG_FILE: path.join(dir, 'rabbitmq'),
    RABBITMQ_ADVANCED_CONFIG_FILE: path.join(dir, 'advanced.config'),
  };
  const ctl = async (...args: string[]): Promise<string> =>
    (await run('rabbitmqctl', ['-n', node, ...args], { timeout: 120_000 })).stdout;
  const start = async (): Promise<void> => {
    fs.rmSync(pidFile, { force: true });
    const child = spawn('rabbitmq-server', ['-detached'], { env, stdio: 'ignore' });
    await new Promise((r) => child.once('exit', r));
    // await_startup fails at once while the VM is not yet registered with epmd.
    const until = Date.now() + 90_000;
    for (;;) {
      try {
        await ctl('await_startup', '--timeout', '60');
        return;
      } catch (e) {
        if (Date.now() > until || vmGone()) {
          throw new Error(`RabbitMQ node ${node} did not start: ${String(e)}\n${logTail(dir)}`);
        }
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  };
  const vmPid = (): number | undefined => {
    try {
      return Number(fs.readFileSync(pidFile, 'utf8').trim()) || undefined;
    } catch {
      return undefined;
    }
  };
  // The VM writes its pid file once it runs: a pid that names no process is a VM that stopped while booting.
  const vmGone = (): boolean => {
    const pid = vmPid();
    if (pid === undefined) return false;
    try {
      process.kill(pid, 0);
      return false;
    } catch {
      return true;
    }
  };
  // A VM that never answered rabbitmqctl cannot be stopped through it.
  const killVm = (): void => {
    const pid = vmPid();
    if (pid === undefined) return;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone already
    }
  };
  const stop = async (): Promise<void> => {
    await ctl('stop').catch(() => undefined);
  };
  try {
    await start();
  } catch (err) {
    killVm();
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    node,
    port,
    url: `amqp://guest:guest@127.0.0.1:${port}/`,
    dir,
    pid: vmPid,
    ctl,
    stop,
    start,
    async join(other) {
      await ctl('stop_app');
      await ctl('reset');
      await ctl('join_cluster', other.node);
      await ctl('start_app');
      await ctl('await_startup');
    },
    async remove() {
      await stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
    logLines: (pattern) => (logFiles(dir) ?? []).flatMap(([, lines]) => lines.filter((l) => pattern.test(l))),
  };
}
