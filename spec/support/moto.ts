/**
 * moto's server mode, started once per test file on a free loopback port: a real HTTP server speaking
 * Route 53, ACM, EKS and Auto Scaling, which the AWS SDK reaches through `AWS_ENDPOINT_URL`.
 *
 *   const moto = await startMoto({ acmValidationWait: 1 });
 *   useMotoEnv(moto.endpoint);   // AWS_ENDPOINT_URL and dummy credentials, for in-process clients
 *   ... await moto.reset(); ... await moto.stop();
 *
 * moto 5.2.1 issues an AMAZON_ISSUED certificate when it is described (or listed) more than
 * `MOTO_ACM_VALIDATION_WAIT` whole seconds after it was requested (`moto/acm/models.py`, `check()`: strictly
 * greater than the wait, read once at start-up as an int); the default is 60.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import net from 'node:net';
import { waitFor } from './wait.js';

/** Every variable from which the AWS SDK or Smarter could take credentials: a test that must find none clears them. */
export const AWS_CREDENTIAL_VARS = [
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'AWS_PROFILE',
  'AWS_DEPLOYED',
  'AWS_WEB_IDENTITY_TOKEN_FILE',
  'AWS_ROLE_ARN',
  'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI',
  'AWS_CONTAINER_CREDENTIALS_FULL_URI',
];

export interface Moto {
  /** `http://127.0.0.1:PORT`, for `AWS_ENDPOINT_URL`. */
  endpoint: string;
  port: number;
  /** The environment a child process needs to reach this moto (endpoint, region, dummy credentials). */
  env: Record<string, string>;
  /** Forgets every zone, record and certificate (`POST /moto-api/reset`). */
  reset(): Promise<void>;
  stop(): Promise<void>;
}

export interface MotoOptions {
  /** Seconds after which a requested ACM certificate is ISSUED (MOTO_ACM_VALIDATION_WAIT); 0 by default here. */
  acmValidationWait?: number;
}

/** Resolves how to run moto: `MOTO_SERVER` (a command line), `moto_server` on PATH, or `python3 -m moto.server`. */
export function motoCommand(): string[] | null {
  if (process.env.MOTO_SERVER) return process.env.MOTO_SERVER.split(' ').filter(Boolean);
  if (spawnSync('moto_server', ['--help'], { stdio: 'ignore' }).status === 0) return ['moto_server'];
  if (spawnSync('python3', ['-c', 'import moto.server'], { stdio: 'ignore' }).status === 0) {
    return ['python3', '-m', 'moto.server'];
  }
  return null;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** Dummy credentials and the endpoint, as the SDK's standard chain reads them. */
export function motoEnv(endpoint: string): Record<string, string> {
  return {
    AWS_ENDPOINT_URL: endpoint,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'testing',
    AWS_SECRET_ACCESS_KEY: 'testing',
  };
}

/** Points this process's AWS SDK clients at `endpoint`; returns a function that restores the environment. */
export function useMotoEnv(endpoint: string): () => void {
  const saved: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(motoEnv(endpoint))) {
    saved[k] = process.env[k];
    process.env[k] = v;
  }
  // A developer's own profile or session token must not leak into the tests.
  for (const k of [
    'AWS_PROFILE',
    'AWS_SESSION_TOKEN',
    'AWS_ENDPOINT_URL_ROUTE_53',
    'AWS_ENDPOINT_URL_ACM',
    'AWS_ENDPOINT_URL_EKS',
    'AWS_ENDPOINT_URL_AUTO_SCALING',
  ]) {
    saved[k] = process.env[k];
    delete process.env[k];
  }
  return () => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
}

export async function startMoto(options: MotoOptions = {}): Promise<Moto> {
  const command = motoCommand();
  if (!command) {
    throw new Error('moto is not installed: run `pip install "moto[server]"` (or set MOTO_SERVER to its command line)');
  }
  const [program, ...args] = command as [string, ...string[]];
  // Another process may take the port between our probe and moto's bind: try a few.
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const child = spawn(program, [...args, '-H', '127.0.0.1', '-p', String(port)], {
      env: { ...process.env, MOTO_ACM_VALIDATION_WAIT: String(options.acmValidationWait ?? 0) },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-4000);
    });
    const endpoint = `http://127.0.0.1:${port}`;
    const up = await waitUntilAnswers(endpoint, child, 30_000);
    if (up) {
      return {
        endpoint,
        port,
        env: motoEnv(endpoint),
        reset: async () => {
          const res = await fetch(`${endpoint}/moto-api/reset`, { method: 'POST' });
          if (!res.ok) throw new Error(`moto reset answered ${res.status}`);
        },
        stop: () => stopChild(child),
      };
    }
    await stopChild(child);
    if (attempt >= 2) throw new Error(`moto_server did not start on port ${port}: ${stderr}`);
  }
}

/** Whether moto answers within `timeoutMs`; false as soon as it exits (its port was taken: the caller tries another). */
async function waitUntilAnswers(endpoint: string, child: ChildProcess, timeoutMs: number): Promise<boolean> {
  const answers = async () => {
    if (child.exitCode !== null) throw new Error('moto_server exited');
    return fetch(`${endpoint}/moto-api/data.json`).then(
      (res) => res.ok,
      () => false,
    );
  };
  return waitFor(answers, timeoutMs, 100).then(
    () => true,
    () => false,
  );
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}
