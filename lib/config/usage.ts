/**
 * `-h`/`--help` and `--version` for a command-line program, answered before the configuration is loaded
 * (as `celery worker --help` answers with a broken environment). The usage is generated from the settings'
 * declarations, so every flag and the environment variables behind it are listed as the code reads them;
 * the subcommands are the program's own (each main passes its list).
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Settings } from './settings.js';

export interface Subcommand {
  /** As typed, with its arguments: `check [dir]`. */
  name: string;
  summary: string;
}

export interface ProgramInfo {
  program: string;
  /** One line under the synopsis. */
  summary: string;
  settings: Settings;
  commands: readonly Subcommand[];
  /** Defaults to this package's version. */
  version?: string;
}

/** The version in this package's package.json (found upward from this file, in the sources or in dist/). */
export function packageVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'smarter-worker' && pkg.version) return pkg.version;
    } catch {
      // not here: one level up
    }
    dir = dirname(dir);
  }
  return 'unknown';
}

function wrap(text: string, width: number, indent: number): string {
  const words = text.split(/\s+/).filter((w) => w.length > 0);
  const lines: string[] = [];
  let line = '';
  for (const w of words) {
    if (line.length > 0 && line.length + 1 + w.length > width - indent) {
      lines.push(line);
      line = w;
    } else line = line.length > 0 ? `${line} ${w}` : w;
  }
  if (line.length > 0) lines.push(line);
  return lines.join(`\n${' '.repeat(indent)}`);
}

const plain = (doc: string) => doc.replace(/`/g, '');

export function usage(info: ProgramInfo): string {
  const col = 30;
  const row = (left: string, right: string) =>
    `  ${left.padEnd(col - 2)}${left.length > col - 3 ? `\n${' '.repeat(col)}` : ''}${wrap(right, 100, col)}`;
  const out: string[] = [`Usage: ${info.program} [command] [options]`, '', info.summary, '', 'Commands:'];
  for (const c of info.commands) out.push(row(c.name, c.summary));
  out.push('', 'Options (each also read from the environment variables shown; a flag wins):');
  const flagged = Object.values(info.settings).filter((s) => s.flag);
  for (const s of flagged) {
    const f = s.flag;
    if (!f) continue;
    const left = `${f.short ? `-${f.short}, ` : '    '}--${f.long}${f.boolean ? '' : ' <value>'}`;
    out.push(row(left, `${plain(s.doc)} [env: ${s.env.join(', ')}]`));
  }
  out.push(row('-h, --help', 'Show this help and exit.'), row('    --version', 'Show the version and exit.'));
  const envOnly = Object.values(info.settings).filter((s) => !s.flag);
  if (envOnly.length > 0) {
    out.push('', 'Environment only:');
    for (const s of envOnly) out.push(row(s.env.join(', '), plain(s.doc)));
  }
  return `${out.join('\n')}\n`;
}

/**
 * Answers `-h`/`--help` (usage on stdout) and `--version`, before anything else is read: returns the exit
 * code (0) when it did, null otherwise. Arguments after `--` are not looked at.
 */
export function answerInfoFlags(
  argv: readonly string[],
  info: ProgramInfo,
  out: (text: string) => void = (t) => void process.stdout.write(t),
): number | null {
  const end = argv.indexOf('--');
  const args = end >= 0 ? argv.slice(0, end) : argv;
  if (args.includes('-h') || args.includes('--help')) {
    out(usage(info));
    return 0;
  }
  if (args.includes('--version')) {
    out(`${info.program} ${info.version ?? packageVersion()}\n`);
    return 0;
  }
  return null;
}
