/**
 * `npm run build`'s last step: the worker's entries, dist/tasks/main.js and dist/bin/celery.js, become bundles of what tsc
 * emitted (our ~180 modules, zod and safe-stable-stringify), with the parts loaded on demand (subcommands, cloud
 * clients) in chunks beside it. Node's ESM loader spends about 0.4 ms on each file it resolves, reads and
 * links: one file instead of ~280 took process start → connecting from ~230 to ~120 ms of CPU (issue 15).
 * The other dependencies stay in node_modules, loaded as before (on first use for most of them).
 */
import { build } from 'esbuild';
import { readFileSync, rmSync } from 'node:fs';

/** Packages bundled: ES modules of many files each, needed at every start. */
const BUNDLED = new Set(['zod', 'safe-stable-stringify']);

const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { dependencies: Record<string, string> };
const external = Object.keys(pkg.dependencies)
  .filter((name) => !BUNDLED.has(name))
  .flatMap((name) => [name, `${name}/*`]);

rmSync('dist/tasks/chunks', { recursive: true, force: true });
await build({
  // `celery` (bin/celery.js) shares the worker's chunks: `celery worker` loads what smarter-worker does.
  entryPoints: ['dist/tasks/main.js', 'dist/bin/celery.js'],
  outbase: 'dist',
  outdir: 'dist',
  // The input is tsc's output, replaced by its bundle.
  allowOverwrite: true,
  bundle: true,
  splitting: true,
  chunkNames: 'tasks/chunks/[name]-[hash]',
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external,
  // Stack traces map back to the TypeScript sources under `node --enable-source-maps`, through tsc's maps.
  sourcemap: 'linked',
  logLevel: 'warning',
  // Fewer bytes to parse at every start (~3 ms of CPU); names are kept, so stack traces still name functions.
  minifyWhitespace: true,
  minifySyntax: true,
});
