import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { FORMATS } from '../../../scripts/spec-diff/report';
import { projectRoot } from '../../../src/paths';

// .github/workflows/contract.yml, the CI example a team copies: checked with GitHub's own workflow
// parser and schema (@actions/workflow-parser, an ES module: run in a node of its own), and for
// what it runs.
const WORKFLOW = path.join(projectRoot, '.github', 'workflows', 'contract.yml');

/** The errors GitHub's parser finds in a workflow's text. */
function workflowErrors(content: string): string[] {
  // The package imports its schema (a .json file) without an import attribute, as a bundler
  // allows; Node asks for one, which a resolve hook (node:module's register) gives it.
  const hook = `export async function resolve(s, c, next) { const r = await next(s, c); return r.url.endsWith('.json') ? { ...r, importAttributes: { type: 'json' } } : r; }`;
  const script = `
    import { register } from 'node:module';
    register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hook)}));
    const { NoOperationTraceWriter, parseWorkflow } = await import('@actions/workflow-parser');
    const content = await new Promise((resolve) => { let s = ''; process.stdin.on('data', (d) => (s += d)).on('end', () => resolve(s)); });
    const result = parseWorkflow({ name: 'contract.yml', content }, new NoOperationTraceWriter());
    process.stdout.write(JSON.stringify(result.context.errors.getErrors().map((e) => e.message)));`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: projectRoot, input: content, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`the workflow parser failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as string[];
}

describe('the CI example: .github/workflows/contract.yml', () => {
  const text = readFileSync(WORKFLOW, 'utf8');

  test("when GitHub's workflow parser reads it, then it finds no error (and it finds them in a broken copy)", () => {
    expect(workflowErrors(text)).toEqual([]);
    expect(workflowErrors(text.replace('runs-on: ubuntu-latest', 'runs-onn: ubuntu-latest')).length).toBeGreaterThan(0);
    expect(workflowErrors(text.replace('pull_request:', 'pull_requests:')).length).toBeGreaterThan(0);
  });

  test('when its steps are read, then on pull requests it installs from the lock file, runs npm run contract and the spec diff against the target branch', () => {
    const workflow = parse(text) as {
      on: Record<string, unknown>;
      jobs: Record<string, { steps: { run?: string; with?: Record<string, unknown>; env?: Record<string, string> }[] }>;
    };
    expect(Object.keys(workflow.on)).toEqual(['pull_request']);
    const steps = Object.values(workflow.jobs).flatMap((job) => job.steps);
    const runs = steps.flatMap((s) => (s.run ? [s.run] : []));
    expect(runs).toEqual([
      'npm ci',
      'npm run contract',
      'npm run -s spec:diff -- --base "origin/$BASE_REF" --format github --summary "$GITHUB_STEP_SUMMARY"',
    ]);
    // The target branch comes in through the environment, never spliced into the script (workflow-parser's injection advice).
    expect(steps).toContainEqual(expect.objectContaining({ env: { BASE_REF: '${{ github.base_ref }}' } }));
    // The base branch's spec is read from git: the checkout keeps the history.
    expect(steps).toContainEqual(expect.objectContaining({ with: expect.objectContaining({ 'fetch-depth': 0 }) }));
    const scripts = (JSON.parse(readFileSync(path.join(projectRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> })
      .scripts;
    expect(scripts).toEqual(expect.objectContaining({ contract: expect.any(String), 'spec:diff': expect.any(String) }));
    expect(FORMATS).toContain('github');
  });
});

describe('npm ci, as the workflow installs', () => {
  test('when npm ci checks the committed lock file against package.json, then they are in sync (every optional platform package listed)', () => {
    // A folder with the two files only: npm ci checks them before it installs anything, and --dry-run stops there.
    const dir = mkdtempSync(path.join(tmpdir(), 'animal-store-npm-ci-'));
    try {
      for (const file of ['package.json', 'package-lock.json']) copyFileSync(path.join(projectRoot, file), path.join(dir, file));
      const r = spawnSync('npm', ['ci', '--dry-run', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: dir, encoding: 'utf8' });
      expect({ status: r.status, errors: r.stderr.split('\n').filter((line) => line.startsWith('npm error')) }).toEqual({
        status: 0,
        errors: [],
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
