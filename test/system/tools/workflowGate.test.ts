import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { projectRoot } from '../../../src/paths';
import { type ScratchProject, scratchProject } from '../../support/scratch';

// The pull request's spec diff step of .github/workflows/contract.yml, run as the runner runs it:
// its exact `run` line in bash, with BASE_REF and GITHUB_STEP_SUMMARY set, in a git repository whose
// origin/main holds the spec before the pull request. It must decide as `npm run contract` does:
// a breaking change listed in spec/accepted-changes.yaml passes, one that is not fails.
const WORKFLOW = path.join(projectRoot, '.github', 'workflows', 'contract.yml');

interface Step {
  name?: string;
  run?: string;
  env?: Record<string, string>;
}

const diffStep = (): Step => {
  const workflow = parse(readFileSync(WORKFLOW, 'utf8')) as { jobs: Record<string, { steps: Step[] }> };
  const step = Object.values(workflow.jobs)
    .flatMap((j) => j.steps)
    .find((s) => s.run?.includes('spec:diff'));
  if (!step?.run) throw new Error('the workflow has no spec diff step');
  return step;
};

describe("the workflow's spec diff step: the same gate as npm run contract, the whole report in the job summary", () => {
  let project: ScratchProject;
  const step = diffStep();
  const spec = () => project.read('spec/openapi.yaml');
  const accept = (entries: string) => project.write('spec/accepted-changes.yaml', `accepted:\n${entries || '  []'}\n`);
  const lowered = `  - rule: request-maximum-lowered
    operation: GET /pets
    reason: No client asks for more than 50 (agreed with both calling teams).
    expires: 2099-12-31
`;
  // An entry for a change made on main before this pull request: it matches nothing here.
  const earlier = `  - rule: response-property-removed
    reason: An earlier pull request's change, not yet released.
    expires: 2099-12-31
`;

  /** Runs the step's `run` line as the runner would: bash, the step's env with the expressions the runner gives. */
  const runStep = () => {
    const summary = project.file('step-summary.md');
    writeFileSync(summary, '');
    const r = project.run(['bash', '-e', '-c', step.run!], {
      BASE_REF: 'main',
      GITHUB_STEP_SUMMARY: summary,
    });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr, summary: readFileSync(summary, 'utf8') };
  };

  beforeAll(() => {
    project = scratchProject();
    const git = (...args: string[]) => {
      const r = project.run(['git', ...args]);
      if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
    };
    git('init', '-q', '-b', 'main');
    git('-c', 'user.email=ci@example.com', '-c', 'user.name=ci', 'commit', '-q', '--allow-empty', '-m', 'empty');
    git('add', 'spec');
    git('-c', 'user.email=ci@example.com', '-c', 'user.name=ci', 'commit', '-q', '-m', 'the spec on main');
    // what actions/checkout leaves for a pull request: the target branch as origin/<base_ref>
    git('update-ref', 'refs/remotes/origin/main', 'HEAD');
    // the pull request: limit's maximum lowered from 100 to 50, a breaking change for GET /pets
    const text = spec();
    const at = text.indexOf('maximum: 100', text.indexOf('name: limit'));
    project.write('spec/openapi.yaml', `${text.slice(0, at)}maximum: 50${text.slice(at + 'maximum: 100'.length)}`);
  }, 60_000);
  afterAll(() => project?.remove());

  test('when the step is read, then it is the one this test runs: the env the runner sets, and no --accepted or --policy to forget', () => {
    expect(step.env).toEqual({ BASE_REF: '${{ github.base_ref }}' });
    expect(step.run).not.toMatch(/--accepted|--policy/);
  });

  test('when the breaking change is listed in spec/accepted-changes.yaml, then the step passes, and the summary says so with the counts', () => {
    accept(`${lowered}${earlier}`);
    const r = runStep();
    expect({ status: r.status, stderr: r.stderr.replace(/spec:diff: building.*\n/, '') }).toEqual({ status: 0, stderr: '' });
    expect(r.stdout).toMatch(/^::notice file=spec\/openapi\.yaml,line=\d+,title=request-maximum-lowered::GET \/pets: /m);
    expect(r.summary).toContain('### origin/main:spec/openapi.yaml → spec/openapi.yaml');
    expect(r.summary).toContain('Passed: 1 error, 0 warning, 0 info (1 accepted)');
    expect(r.summary).toMatch(/\| error \(accepted\) \| GET \/pets \| .* \| `request-maximum-lowered` \|/);
    // the earlier change's entry is not this pull request's: named, not failed
    expect(r.summary).toContain('entry 2 (response-property-removed) matches no change of this diff');
  }, 180_000);

  test('when it is not listed, then the step fails with an error annotation on the changed line, and the summary says so', () => {
    accept(earlier);
    const r = runStep();
    expect(r.status).toBe(1);
    const line =
      spec()
        .split('\n')
        .findIndex((l) => l.includes('maximum: 50')) + 1;
    expect(r.stdout).toContain(
      `::error file=spec/openapi.yaml,line=${line},title=request-maximum-lowered::GET /pets: maximum lowered: 100 → 50`,
    );
    expect(r.summary).toContain('**Failed**: 1 error, 0 warning, 0 info');
    expect(r.summary).toContain('| **error** | GET /pets |');
  }, 180_000);

  test('when the team policy lowers the rule to a warning, then the step passes and every output names the policy', () => {
    accept('');
    project.write(
      'spec/spec-diff-policy.yaml',
      'rules:\n  request-maximum-lowered:\n    level: warning\n    reason: Our clients clamp limit themselves.\n',
    );
    try {
      const r = runStep();
      expect(r.status).toBe(0);
      expect(r.stdout).toContain('title=request-maximum-lowered (policy%3A error → warning)::');
      expect(r.summary).toContain('Passed: 0 error, 1 warning, 0 info (1 set by policy) — policy: `spec/spec-diff-policy.yaml`');
      expect(r.summary).toContain('| warning (policy; was error) | GET /pets |');
    } finally {
      project.write('spec/spec-diff-policy.yaml', '');
    }
  }, 180_000);
});
