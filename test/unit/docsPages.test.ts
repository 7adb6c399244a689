import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../src/paths';

// docs/ is read by three kinds of reader (docs/README.md): each page says at once whether it is
// theirs, its lines are read whole in an editor and a diff, and its long pages can be linked into.

const docs = path.join(projectRoot, 'docs');
const pages = readdirSync(docs)
  .filter((name) => name.endsWith('.md'))
  .map((name) => ({ name, text: readFileSync(path.join(docs, name), 'utf8') }));

/** The page's lines outside fenced code blocks, with their numbers. */
function proseLines(text: string): { n: number; line: string }[] {
  let fenced = false;
  return text.split('\n').flatMap((line, i) => {
    if (line.startsWith('```')) fenced = !fenced;
    return fenced || line.startsWith('```') ? [] : [{ n: i + 1, line }];
  });
}

describe('the pages of docs/', () => {
  test('when docs/ is listed, then it has the pages docs/README.md names, and each of them is linked from it', () => {
    const index = pages.find((p) => p.name === 'README.md')?.text ?? '';
    expect(pages.length).toBeGreaterThan(10);
    for (const { name } of pages.filter((p) => p.name !== 'README.md')) expect(index).toContain(`](${name})`);
  });

  test.each(pages.map((p) => [p.name, p.text] as const))(
    'when %s is opened, then its first paragraph after the title says whom it is for ("For …")',
    (_name, text) => {
      const [title, blank, ...rest] = text.split('\n');
      expect([title, blank]).toEqual([expect.stringMatching(/^# \S/), '']);
      const opening = rest.slice(0, rest.indexOf('')).join(' ');
      // The readers, named before the colon; what the page covers after it.
      expect(opening).toMatch(/^For [^:]{3,200}: \S/);
    },
  );

  test.each(pages.map((p) => [p.name, p.text] as const))(
    'when %s is read, then no line outside code blocks and tables is over 200 characters',
    (_name, text) => {
      const long = proseLines(text).filter(({ line }) => !line.startsWith('|') && line.length > 200);
      expect(long.map(({ n, line }) => `${n}: ${line.slice(0, 60)}…`)).toEqual([]);
    },
  );

  test.each(['api.md', 'testing.md', 'operations.md'])(
    'when %s is read, then it is split by heading: no run of more than 90 lines without one, and at least 8 headings',
    (name) => {
      const lines = proseLines(readFileSync(path.join(docs, name), 'utf8'));
      const headings = lines.filter(({ line }) => /^#{2,4} \S/.test(line)).map(({ n }) => n);
      expect(headings.length).toBeGreaterThanOrEqual(8);
      const last = lines.at(-1)?.n ?? 0;
      const runs = [...headings, last].map((n, i, all) => n - (i === 0 ? 1 : (all[i - 1] as number)));
      expect(Math.max(...runs)).toBeLessThanOrEqual(90);
    },
  );

  test('when docs/ is measured, then it is at most 3,000 lines with its dated log, and performance.md at most 250: a reference, not a notebook', () => {
    const lines = (text: string) => text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
    expect(pages.reduce((n, p) => n + lines(p.text), 0)).toBeLessThanOrEqual(3_000);
    expect(lines(pages.find((p) => p.name === 'performance.md')?.text ?? '')).toBeLessThanOrEqual(250);
  });

  test('when a page names an internal issue, then it is found: no page of docs/ or the README says "issue N"', () => {
    const readme = readFileSync(path.join(docs, '..', 'README.md'), 'utf8');
    const named = [...pages, { name: 'README.md (top)', text: readme }].flatMap(({ name, text }) =>
      [...text.matchAll(/\bissues? #?\d+\b/gi)].map((m) => `${name}: ${m[0]}`),
    );
    expect(named).toEqual([]);
  });

  test('when the README and docs show an npm run command, then it names a script package.json has', () => {
    const scripts = Object.keys((JSON.parse(readFileSync(path.join(docs, '..', 'package.json'), 'utf8')) as { scripts: object }).scripts);
    const readme = readFileSync(path.join(docs, '..', 'README.md'), 'utf8');
    const shown = [...pages, { name: 'README.md (top)', text: readme }].flatMap(({ name, text }) =>
      [...text.matchAll(/npm run (?:-s )?([a-z][\w:-]*)/g)].map((m) => ({ name, script: m[1] as string })),
    );
    expect(shown.length).toBeGreaterThan(50);
    expect(shown.filter(({ script }) => !scripts.includes(script)).map(({ name, script }) => `${name}: npm run ${script}`)).toEqual([]);
  });
});
