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

  test('when a source changed after the build, then the next run builds again', () => {
    project.write('scripts/spec-diff/schema.ts', `${project.read('scripts/spec-diff/schema.ts')}// edited\n`);
    expect(compiled().stderr).toContain(building);
    expect(compiled().stderr).not.toContain(building);
  }, 120_000);
});
