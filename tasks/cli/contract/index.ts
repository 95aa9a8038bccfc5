/**
 * `smarter-worker contract --smarter <checkout> [--json]` (and `smarter-beat contract`, Beat and its settings
 * only): reads a Smarter checkout's Python source and prints one line per difference with this worker's
 * registry and Beat schedule, grouped; exit 0 when there is none, 1 otherwise, 2 when the checkout cannot be read.
 */
import { UsageError } from '../options.js';
import { type Difference, GROUPS, compareBeat, compareSettings, compareTasks, sortDifferences } from './compare.js';
import { ourBeat, ourTasks } from './ours.js';
import { ContractError, type SmarterLayout, type SmarterSource, readSmarter } from './smarter-source.js';

export { ContractError };
export const CONTRACT_FLAGS = { strings: ['smarter', 'python'], booleans: ['json'] } as const;

const LAYOUTS: Record<SmarterLayout, string> = {
  'adr-030': 'the ADR-030 line: llmclient, llmhost, infrastructure',
  llm_client: 'the llm_client app of 0.14',
  unknown: 'neither llmclient nor llm_client: an unknown layout',
};

export type Scope = 'worker' | 'beat';

export function differences(smarter: SmarterSource, scope: Scope): Difference[] {
  const beat = compareBeat(smarter, ourBeat());
  // Beat's own check reads only the settings its entries name.
  if (scope === 'beat') return sortDifferences([...beat, ...compareSettings({ ...smarter, tasks: [] })]);
  return sortDifferences([...compareTasks(smarter, ourTasks()), ...beat, ...compareSettings(smarter)]);
}

export function formatText(smarter: SmarterSource, diffs: Difference[], scope: Scope): string {
  const lines = [
    `Smarter at ${smarter.root} (${LAYOUTS[smarter.layout]}): ${scope === 'worker' ? `${smarter.tasks.length} tasks, ` : ''}${smarter.beat?.entries.length ?? 0} Beat entries`,
    ...smarter.errors.map((e) => `unreadable: ${e}`),
  ];
  for (const group of GROUPS) {
    const inGroup = diffs.filter((d) => d.group === group);
    if (inGroup.length === 0) continue;
    lines.push('', `${group} (${inGroup.length})`);
    for (const d of inGroup) lines.push(`  ${d.subject}: ${d.message}${d.where ? `  [${d.where}]` : ''}`);
  }
  lines.push(
    '',
    diffs.length === 0 ? 'No differences.' : `${diffs.length} difference${diffs.length === 1 ? '' : 's'}.`,
  );
  return lines.join('\n');
}

export function formatJson(smarter: SmarterSource, diffs: Difference[]): string {
  return JSON.stringify(
    {
      smarter: {
        root: smarter.root,
        layout: smarter.layout,
        tasks: smarter.tasks.length,
        beatEntries: smarter.beat?.entries.length ?? 0,
        unreadable: smarter.errors,
      },
      count: diffs.length,
      differences: diffs,
    },
    null,
    2,
  );
}

export async function contractCommand(
  own: Record<string, string | true>,
  scope: Scope,
  out: (s: string) => void,
): Promise<number> {
  const path = own.smarter;
  if (typeof path !== 'string' || path === '') {
    throw new UsageError(`usage: smarter-${scope} contract --smarter <path to a Smarter checkout> [--json]`);
  }
  let smarter: SmarterSource;
  try {
    smarter = await readSmarter(path, typeof own.python === 'string' ? own.python : undefined);
  } catch (err) {
    if (err instanceof ContractError) {
      process.stderr.write(`smarter-${scope} contract: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
  const diffs = differences(smarter, scope);
  out(own.json === true ? formatJson(smarter, diffs) : formatText(smarter, diffs, scope));
  return diffs.length === 0 && smarter.errors.length === 0 ? 0 : 1;
}
