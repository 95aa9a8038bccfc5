/**
 * Every relative link of README.md, CHANGELOG.md and docs/ leads to a file of the repository, and every
 * `#anchor` to a heading (GitHub's slug) or an `id` of the page it names.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { docPages } from '../../build/docs.js';

const PAGES = ['README.md', 'CHANGELOG.md', ...docPages()].filter((p) => existsSync(p));
/** The text outside fenced blocks and inline code, where a link is a link. */
function prose(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of markdown.replace(/^```[\s\S]*?^```/gm, '').matchAll(/^#{1,6} +(.+?) *#*$/gm)) {
    const base = (m[1] ?? '')
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  for (const m of markdown.matchAll(/<a (?:id|name)="([^"]+)"/g)) out.add(m[1] ?? '');
  return out;
}

function links(page: string): Array<{ target: string; problem: string | null }> {
  const text = prose(readFileSync(page, 'utf8'));
  return [...text.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?: "[^"]*")?\)/g)]
    .map((m) => m[1] ?? '')
    .filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t))
    .map((target) => {
      const [file = '', anchor] = target.split('#');
      const resolved = file === '' ? page : path.normalize(path.join(path.dirname(page), file));
      if (!existsSync(resolved)) return { target, problem: `${resolved} does not exist` };
      if (anchor === undefined || statSync(resolved).isDirectory()) return { target, problem: null };
      return {
        target,
        problem: anchors(readFileSync(resolved, 'utf8')).has(anchor) ? null : `no heading #${anchor} in ${resolved}`,
      };
    });
}

test('the manual has pages to check', () => {
  expect(PAGES).toEqual(
    expect.arrayContaining(['README.md', 'CHANGELOG.md', 'docs/getting-started.md', 'docs/migrating.md']),
  );
});

test.each(PAGES)('every relative link and anchor of %s resolves', (page) => {
  expect(links(page).filter((l) => l.problem !== null)).toEqual([]);
});

test("the anchors are GitHub's: punctuation dropped, code spans kept as text, repeats numbered", () => {
  expect([...anchors("# Smarter's tasks\n## `smarter-worker` flags\n## A, B & C\n## A, B & C\n")]).toEqual([
    'smarters-tasks',
    'smarter-worker-flags',
    'a-b--c',
    'a-b--c-1',
  ]);
});

test('a broken link or anchor is found', () => {
  expect(anchors('# Quick start').has('quick-start')).toBe(true);
  expect(anchors('# Quick start').has('quickstart')).toBe(false);
});
