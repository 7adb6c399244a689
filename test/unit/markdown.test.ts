import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../src/paths';

// The README and docs/ are what a newcomer reads: every relative link must lead to a file
// that exists, and every #anchor to a heading in it (GitHub's heading ids).

function markdownFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (name === 'node_modules' || name.startsWith('.') || name === 'dist') return [];
    const file = path.join(dir, name);
    return statSync(file).isDirectory() ? markdownFiles(file) : name.endsWith('.md') ? [file] : [];
  });
}

/** The ids GitHub gives a file's headings: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
export function headingIds(markdown: string): Set<string> {
  const ids = new Set<string>();
  const seen = new Map<string, number>();
  const text = markdown.replace(/^```[\s\S]*?^```/gm, '');
  for (const [, heading] of text.matchAll(/^#{1,6} +(.+?) *#*$/gm)) {
    const base = (heading as string)
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    ids.add(n === 0 ? base : `${base}-${n}`);
  }
  return ids;
}

const files = [
  path.join(projectRoot, 'README.md'),
  ...markdownFiles(path.join(projectRoot, 'docs')),
  ...markdownFiles(path.join(projectRoot, 'src')),
  ...markdownFiles(path.join(projectRoot, 'patches')),
  ...markdownFiles(path.join(projectRoot, 'scripts')),
  ...markdownFiles(path.join(projectRoot, 'test')),
];

describe('links in the README and docs', () => {
  test("when the README is read, then it is a newcomer's page: at most 150 lines, none over 200 characters outside code blocks; the rest is in docs/", () => {
    const readme = readFileSync(path.join(projectRoot, 'README.md'), 'utf8');
    expect(readme.split('\n').length).toBeLessThanOrEqual(150);
    const prose = readme.replace(/^```[\s\S]*?^```/gm, '').split('\n');
    expect(prose.filter((line) => line.length > 200)).toEqual([]);
  });

  test("when headings are read, then their ids follow GitHub's", () => {
    expect([...headingIds('# A\n## Stubs in production: `ALLOW_STUBS`\n## Run it\n## Run it\n```\n# not a heading\n```\n')]).toEqual([
      'a',
      'stubs-in-production-allow_stubs',
      'run-it',
      'run-it-1',
    ]);
  });

  test.each(files.map((f) => [path.relative(projectRoot, f), f]))('%s: every relative link and anchor resolves', (_name, file) => {
    const text = readFileSync(file, 'utf8').replace(/^```[\s\S]*?^```/gm, '');
    const broken: string[] = [];
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/i.test(target as string)) continue;
      const [ref, anchor] = (target as string).split('#') as [string, string | undefined];
      const resolved = ref === '' ? file : path.resolve(path.dirname(file), decodeURIComponent(ref));
      if (!existsSync(resolved)) {
        broken.push(`${target}: no such file`);
        continue;
      }
      if (anchor !== undefined && !headingIds(readFileSync(resolved, 'utf8')).has(anchor))
        broken.push(`${target}: no heading with that id`);
    }
    expect(broken).toEqual([]);
  });
});

describe('folder READMEs', () => {
  /** The operations the handler registry names (generated/handlers.ts). */
  const operationIds = new Set(
    [...readFileSync(path.join(projectRoot, 'generated', 'handlers.ts'), 'utf8').matchAll(/from '\.\.\/src\/handlers\/(\w+)'/g)].map(
      (m) => m[1] as string,
    ),
  );
  // A folder's README is its table of contents: what a newcomer reads before opening its files.
  const readmes = ['src', 'scripts', 'test', 'patches'].flatMap((top) =>
    markdownFiles(path.join(projectRoot, top)).filter((file) => path.basename(file) === 'README.md'),
  );

  test.each(readmes.map((file) => [path.relative(projectRoot, file), file]))(
    'when %s is read, then it names every file and folder beside it',
    (_name, file) => {
      const text = readFileSync(file, 'utf8');
      const dir = path.dirname(file);
      const entries = readdirSync(dir, { withFileTypes: true }).filter((e) => e.name !== 'README.md' && !e.name.startsWith('.'));
      // Named as a word of its own (in backticks, a link, a heading); one file per operationId, as `<operationId>.ts`.
      const named = (name: string) =>
        new RegExp(`(^|[\\s\`(\\[/])${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}($|[\\s\`)\\],.:;])`, 'm').test(text) ||
        (operationIds.has(name.replace(/\.ts$/, '')) && text.includes('`<operationId>.ts`'));
      const unnamed = entries.map((e) => (e.isDirectory() ? `${e.name}/` : e.name)).filter((name) => !named(name));
      expect(unnamed).toEqual([]);
    },
  );

  test('when the folders with a README are counted, then there are some in each of src/, scripts/ and test/', () => {
    for (const top of ['src', 'scripts', 'test'])
      expect(readmes.some((file) => file.startsWith(path.join(projectRoot, top, '')))).toBe(true);
  });
});
