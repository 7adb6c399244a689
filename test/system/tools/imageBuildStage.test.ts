import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { projectRoot } from '../../../src/paths';

/*
 * The Dockerfile's build stage, replayed without a Docker engine: a folder holding only what the
 * stage copies (its COPY lines, in order), the dependencies it installed (linked), and then the
 * stage's own RUN commands after the install. When `npm run build` came to read a folder the stage
 * does not copy (scripts/, for the spec diff), the image stopped building and nothing noticed.
 */
const dockerfile = readFileSync(path.join(projectRoot, 'Dockerfile'), 'utf8');

/** The instructions of the stage named `name` (`FROM … AS name`), continuation lines joined. */
function stage(name: string): string[] {
  const lines = dockerfile.replace(/\\\n/g, ' ').split('\n');
  const start = lines.findIndex((l) => new RegExp(`^FROM \\S+ AS ${name}$`, 'i').test(l.trim()));
  if (start === -1) throw new Error(`The Dockerfile has no stage named ${name}`);
  const end = lines.findIndex((l, i) => i > start && /^FROM /i.test(l));
  return lines.slice(start + 1, end === -1 ? undefined : end).filter((l) => l.trim() !== '' && !l.trim().startsWith('#'));
}

describe("the Dockerfile's build stage", () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'animal-store-image-build-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('when only what the build stage copies is there, then its build commands succeed and make the files the final stage takes', () => {
    const instructions = stage('build');
    const copies = instructions.filter((l) => /^COPY /.test(l));
    expect(copies.length).toBeGreaterThan(0);
    for (const line of copies) {
      const args = line.split(/\s+/).slice(1);
      expect(args.some((a) => a.startsWith('--'))).toBe(false);
      const destination = args.pop() as string;
      for (const source of args) {
        const target = destination.endsWith('/') ? path.join(dir, destination, path.basename(source)) : path.join(dir, destination);
        cpSync(path.join(projectRoot, source), target, { recursive: true });
      }
    }
    // The stage's `npm ci` made node_modules (patches applied): this project's, linked.
    symlinkSync(path.join(projectRoot, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
    const runs = instructions
      .filter((l) => /^RUN /.test(l))
      .map((l) => l.replace(/^RUN\s+/, ''))
      .filter((command) => !/^npm ci\b/.test(command));
    expect(runs).toContain('npm run build');
    for (const command of runs) {
      const result = spawnSync('sh', ['-c', command], { cwd: dir, encoding: 'utf8', timeout: 240_000 });
      expect({ command, status: result.status, output: result.status === 0 ? '' : `${result.stdout}${result.stderr}` }).toEqual({
        command,
        status: 0,
        output: '',
      });
    }
    // What the final stage copies from this one.
    expect(existsSync(path.join(dir, 'dist', 'src', 'main.js'))).toBe(true);
  }, 300_000);

  test("when the build's package is required by its name, then it gives the client, loading only the client's modules and openapi-fetch", () => {
    // node_modules is linked to this project's: a module there is named from node_modules/ on.
    const script = `const c = require('animal-store-api');
      const name = (f) => (f.includes('/node_modules/') ? f.slice(f.lastIndexOf('node_modules/')) : require('path').relative(process.cwd(), f));
      console.log(JSON.stringify({ exports: Object.keys(c).sort(), loaded: Object.keys(require.cache).map(name).sort() }));`;
    const result = spawnSync(process.execPath, ['-e', script], { cwd: dir, encoding: 'utf8' });
    expect(result.stderr).toBe('');
    const { exports, loaded } = JSON.parse(result.stdout);
    expect(exports).toEqual(expect.arrayContaining(['AnimalStoreError', 'createAnimalStoreClient', 'walkPets']));
    expect(loaded).toEqual([
      'dist/src/client/errors.js',
      'dist/src/client/index.js',
      'dist/src/client/links.js',
      'dist/src/client/retry.js',
      'node_modules/openapi-fetch/dist/index.cjs',
    ]);
  });
});
