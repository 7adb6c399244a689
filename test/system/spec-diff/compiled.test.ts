import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../../src/paths';
import { type Json, base, list } from '../../support/petsDocument';
import { type ScratchProject, scratchProject } from '../../support/scratch';
import { stringify } from 'yaml';

// npm run spec:diff runs the compiled command (scripts/spec-diff/run.mjs): built on first use in a
// fresh copy of the project (which has no dist/), not rebuilt while nothing changed, rebuilt after
// a source changed, and answering as the TypeScript source does.
describe('spec diff: the compiled command', () => {
  let project: ScratchProject;
  beforeAll(() => {
    project = scratchProject();
    const lowered: Json = base();
    list(lowered).parameters[0].schema.maximum = 50;
    project.write('a.yaml', stringify(base()));
    project.write('b.yaml', stringify(lowered));
  });
  afterAll(() => project.remove());

  const compiled = () => project.run(['node', 'scripts/spec-diff/run.mjs', 'a.yaml', 'b.yaml', '--format=json']);
  const building = 'spec:diff: building';

  test('when it is run in a fresh copy, then it builds once, and answers as the TypeScript source does', () => {
    const first = compiled();
    expect(first.stderr).toContain(building);
    expect(first.status).toBe(1);
    const source = project.run(['ts-node', '--transpile-only', 'scripts/spec-diff/cli.ts', 'a.yaml', 'b.yaml', '--format=json']);
    expect(first.stdout).toBe(source.stdout);
    expect(JSON.parse(first.stdout)).toEqual(
      expect.objectContaining({ changes: [expect.objectContaining({ rule: 'request-maximum-lowered', level: 'error' })] }),
    );

    const again = compiled();
    expect(again.stderr).not.toContain(building);
    expect(again.stdout).toBe(first.stdout);
  }, 120_000);

  test('when a source changed after the build, then the next run builds again, and runs the change', () => {
    project.write('scripts/spec-diff/schema.ts', `${project.read('scripts/spec-diff/schema.ts')}// edited\n`);
    expect(compiled().stderr).toContain(building);
    expect(compiled().stderr).not.toContain(building);
    // a module cli.ts does not name itself: its change is built too
    project.write(
      'scripts/spec-diff/report.ts',
      project.read('scripts/spec-diff/report.ts').replace("'No changes. '", "'Nothing changed. '"),
    );
    const same = project.run(['node', 'scripts/spec-diff/run.mjs', 'a.yaml', 'a.yaml']);
    expect(same.stdout).toContain('Nothing changed. 0 error');
  }, 120_000);
});

describe('spec diff: a TypeScript project of its own, apart from the service', () => {
  test("when the projects' files are listed, then the service's build holds no script, and the spec diff's holds only itself and the modules it shares", () => {
    const tsc = require.resolve('typescript/bin/tsc');
    const files = (config: string) => {
      const r = spawnSync(process.execPath, [tsc, '-p', config, '--listFilesOnly'], { cwd: projectRoot, encoding: 'utf8' });
      expect(r.status).toBe(0);
      return r.stdout
        .split('\n')
        .filter((f) => f && !f.includes(`${path.sep}node_modules${path.sep}`))
        .map((f) => path.relative(projectRoot, f));
    };
    const service = files('src/tsconfig.build.json');
    expect(service.filter((f) => !f.startsWith(`src${path.sep}`) && !f.startsWith(`generated${path.sep}`))).toEqual([]);
    const diff = files('scripts/spec-diff/tsconfig.build.json');
    expect(diff).toContain(path.join('scripts', 'spec-diff', 'cli.ts'));
    const shared = diff.filter((f) => !f.startsWith(path.join('scripts', 'spec-diff')));
    expect(shared.sort()).toEqual(
      [
        'scripts/lib/text.ts',
        'scripts/lib/tool.ts',
        'src/contract/basePath.ts',
        'src/contract/bundle.ts',
        'src/contract/externalRefs.ts',
        'src/contract/methods.ts',
        'src/paths.ts',
      ].map((f) => path.join(...f.split('/'))),
    );
  });

  test('when the image is built, then its build stage copies no script: the service alone', () => {
    const dockerfile = readFileSync(path.join(projectRoot, 'Dockerfile'), 'utf8');
    expect(dockerfile).not.toMatch(/^COPY scripts/m);
    const scripts = (JSON.parse(readFileSync(path.join(projectRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> })
      .scripts;
    expect(scripts.build).toBe('tsc -p src/tsconfig.build.json');
    expect(scripts['build:spec-diff']).toBe('node scripts/spec-diff/run.mjs --build');
  });
});
