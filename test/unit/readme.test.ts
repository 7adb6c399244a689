import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { EMBEDDED_WARNING, banner, describeDatabase } from '../../src/ops/banner';
import { createLogging } from '../../src/ops/logger';
import { readMigrations } from '../../src/store/database/migrate';
import { projectRoot } from '../../src/paths';

// The README is what a newcomer reads first: its banner sample is what `npm start` prints on a
// fresh clone, its layout is the tree, and docs/scripts.md names every script. Each is compared
// with what the code prints and the folders that exist, so a new migration, folder or script
// that the README does not show fails here.
const read = (file: string) => readFileSync(path.join(projectRoot, file), 'utf8');
const readme = read('README.md');

/** The lines of the README's first code block that holds `marker`. */
function codeBlockWith(marker: string): string[] {
  const block = [...readme.matchAll(/^```[a-z]*\n([\s\S]*?)^```/gm)].map((m) => m[1] as string).find((b) => b.includes(marker));
  if (block === undefined) throw new Error(`the README has no code block with ${marker}`);
  return block.trimEnd().split('\n');
}

/** The folders (with `/`) and files of `dir`, as a listing names them: no dot-files, no README. */
function entriesOf(dir: string, { files }: { files: RegExp }): string[] {
  return readdirSync(path.join(projectRoot, dir), { withFileTypes: true })
    .filter((e) => !e.name.startsWith('.') && (e.isDirectory() || files.test(e.name)))
    .map((e) => (e.isDirectory() ? `${e.name}/` : e.name))
    .sort();
}

describe('the README', () => {
  test('when its operation table is read, then it names every operationId of the spec, each once', () => {
    const spec = parse(read('spec/openapi.yaml')) as { paths: Record<string, Record<string, { operationId?: string }>> };
    const ids = Object.values(spec.paths).flatMap((item) => Object.values(item).flatMap((op) => (op?.operationId ? [op.operationId] : [])));
    const table = readme.slice(readme.indexOf('| Operation |'), readme.indexOf('\n\n', readme.indexOf('| Operation |')));
    const named = [...table.matchAll(/^\| ([^|]+) \|/gm)].flatMap((m) => [...(m[1] as string).matchAll(/`(\w+)`/g)].map((n) => n[1]));
    expect(ids.length).toBeGreaterThan(8);
    expect(named.sort()).toEqual([...ids].sort());
  });

  test('when its banner sample is read, then it is what a fresh npm start prints, its warning and every migration included', () => {
    const lines: string[] = [];
    const { logger } = createLogging({ level: 'info', destination: { write: (line: string) => lines.push(line) } });
    const spec = parse(read('spec/openapi.yaml')) as { info: { title: string; version: string } };
    // The versions start-up applies to a fresh database: every migration file, as migrate() reads them.
    const migrations = readMigrations().map((m) => m.version);
    const database = describeDatabase(
      {
        url: 'postgres://postgres@127.0.0.1:0/postgres',
        embeddedDataDir: '/…/.data/pglite',
        poolSize: 10,
        poolMode: 'session',
        replicaUrl: undefined,
        replicaMaxLagMs: 1000,
      },
      migrations,
    );
    banner(logger, {
      title: spec.info.title,
      version: spec.info.version,
      apiRoot: '/v1',
      keys: { count: 1, generated: '3q2Nf…' },
      origin: 'http://127.0.0.1:3000',
      metricsOrigin: undefined,
      database,
      processes: 1,
      mcp: false,
    });
    const printed = lines.map((line) => (JSON.parse(line) as { msg: string }).msg);
    expect(migrations.length).toBeGreaterThan(0);
    // The embedded database's warning comes first, as a fresh `npm start` prints it.
    expect(codeBlockWith('listening on')).toEqual([EMBEDDED_WARNING, ...printed]);
  });

  test('when its layout is read, then it names every top-level folder, and the folders and files of generated/, src/, scripts/ and test/', () => {
    const layout = codeBlockWith('generated/');
    // An entry is a line starting with its folder; the indented lines after it continue it.
    const entries = new Map<string, string>();
    let current = '';
    for (const line of layout) {
      const top = /^(\S+\/)\s/.exec(line)?.[1];
      if (top !== undefined) current = top;
      entries.set(current, `${entries.get(current) ?? ''} ${line.slice(top?.length ?? 0)}`);
    }
    const named = (folder: string, pattern: RegExp) => [...(entries.get(folder) ?? '').matchAll(pattern)].map((m) => m[1] as string).sort();
    const topFolders = readdirSync(projectRoot, { withFileTypes: true })
      .filter((e) => e.isDirectory() && !e.name.startsWith('.') && !['node_modules', 'dist'].includes(e.name))
      .map((e) => `${e.name}/`)
      .sort();
    expect([...entries.keys()].sort()).toEqual(topFolders);
    const folderOrTs = /(?:^|\s)([\w.-]+\/|[\w-]+\.ts)(?=[\s,:;)]|$)/g;
    for (const folder of ['src/', 'scripts/', 'test/'])
      expect({ folder, named: named(folder, folderOrTs) }).toEqual({ folder, named: entriesOf(folder, { files: /\.ts$/ }) });
    expect(named('generated/', folderOrTs)).toEqual(entriesOf('generated', { files: /\.ts$/ }));
  });

  test('when docs/scripts.md is read, then it names every script of package.json', () => {
    const scripts = Object.keys((JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts);
    const doc = read('docs/scripts.md');
    // Named as `npm start`, `npm run NAME`, or on its own in backticks in a row that names its siblings (`test:unit` / `test:component`).
    const isNamed = (name: string) => {
      const n = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      return new RegExp(`\`npm (run )?${n}(?![\\w:-])|\`${n}\``).test(doc);
    };
    const unnamed = scripts.filter((name) => !['prestart', 'postinstall'].includes(name) && !isNamed(name));
    expect(unnamed).toEqual([]);
  });
});

describe('the slowest test files, printed after every run', () => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { slowestFilesReport } = require('../support/slowestFiles.cjs') as {
    slowestFilesReport: (files: { file: string; seconds: number }[], shown?: number) => string[];
  };

  test("when a run's files are reported, then each tier's total comes first, then the slowest files, slowest first", () => {
    const report = slowestFilesReport(
      [
        { file: 'test/unit/a.test.ts', seconds: 1 },
        { file: 'test/component/b.test.ts', seconds: 12.34 },
        { file: 'test/component/c.test.ts', seconds: 3 },
        { file: 'test/system/d.test.ts', seconds: 40 },
      ],
      3,
    );
    expect(report).toEqual([
      "Test files' time, summed over workers: unit 1 files 1 s, component 2 files 15 s, system 1 files 40 s. The slowest:",
      '   40.0 s  test/system/d.test.ts',
      '   12.3 s  test/component/b.test.ts',
      '    3.0 s  test/component/c.test.ts',
    ]);
  });
});
