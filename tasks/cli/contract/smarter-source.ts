/**
 * What `smarter_ast.py` reads from a Smarter checkout, without running Django: every task, every Beat entry,
 * and the settings their options name. The script is Python's own `ast`, so Smarter's source is parsed by the
 * language it is written in; this side only validates its JSON (`unknown` until the schema accepts it).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as z from 'zod';

/** A decorator or Beat option: a literal, a `smarter_settings.<attr>` with its env variable and default, or text. */
const value = z.object({
  value: z.unknown().optional(),
  setting: z.string().optional(),
  env: z.string().optional(),
  expr: z.string().optional(),
});
export type SmarterValue = z.infer<typeof value>;

const param = z.object({ name: z.string(), default: value.optional() });
export type SmarterParam = z.infer<typeof param>;

const task = z.object({
  name: z.string(),
  file: z.string(),
  line: z.number(),
  queue: value.nullable(),
  autoretryFor: z.array(z.string()).nullable(),
  maxRetries: value.nullable(),
  retryBackoff: value.nullable(),
  bind: z.boolean(),
  params: z.array(param),
  keywordOnly: z.array(param),
  varargs: z.string().nullable(),
  varkw: z.string().nullable(),
});
export type SmarterTask = z.infer<typeof task>;

const when = z.union([
  z.object({ seconds: z.number() }),
  z.object({ crontab: z.record(z.string(), z.string()) }),
  z.object({ expr: z.string() }),
]);

const beatEntry = z.object({
  name: z.string(),
  line: z.number(),
  task: z.string().nullable(),
  schedule: when.nullable(),
  options: z.record(z.string(), z.unknown()),
  args: value.optional(),
  kwargs: value.optional(),
});
export type SmarterBeatEntry = z.infer<typeof beatEntry>;

const layout = z.enum(['adr-030', 'llm_client', 'unknown']);
export type SmarterLayout = z.infer<typeof layout>;

const source = z.object({
  root: z.string(),
  layout,
  tasks: z.array(task),
  beat: z.object({ file: z.string(), entries: z.array(beatEntry) }).nullable(),
  errors: z.array(z.string()),
});
export type SmarterSource = z.infer<typeof source>;

export class ContractError extends Error {
  override name = 'ContractError';
}

/** The script beside this module: next to the sources, next to tsc's output, or beside the bundle's chunks. */
export function scriptPath(): string {
  for (const rel of ['smarter_ast.py', '../cli/contract/smarter_ast.py', 'cli/contract/smarter_ast.py']) {
    const path = fileURLToPath(new URL(rel, import.meta.url));
    if (existsSync(path)) return path;
  }
  throw new ContractError('smarter_ast.py is missing beside the contract check (a build without it?)');
}

export const DEFAULT_PYTHON = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';

/** Runs the reader over a checkout; a checkout it cannot read is a ContractError with Python's own words. */
export function readSmarter(checkout: string, python: string = DEFAULT_PYTHON): Promise<SmarterSource> {
  return new Promise((resolve, reject) => {
    execFile(
      python,
      [scriptPath(), checkout],
      { maxBuffer: 64 * 1024 * 1024, timeout: 120_000 },
      (err, stdout, stderr) => {
        if (err) {
          reject(new ContractError(`${python} could not read ${checkout}: ${stderr.trim() || err.message}`));
          return;
        }
        let json: unknown;
        try {
          json = JSON.parse(stdout);
        } catch {
          reject(new ContractError(`smarter_ast.py printed something that is not JSON: ${stdout.slice(0, 200)}`));
          return;
        }
        const parsed = source.safeParse(json);
        if (parsed.success) resolve(parsed.data);
        else {
          reject(new ContractError(`smarter_ast.py's output is not what the check expects: ${parsed.error.message}`));
        }
      },
    );
  });
}
