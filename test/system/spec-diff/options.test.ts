import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { type Json, base, list } from '../../support/petsDocument';
import { projectRoot } from '../../../src/paths';

// The command line's options of a team's CI: a policy beside the spec (or given), filters, and a
// document on stdin; run as CI runs it (the compiled command), each mistake an exit 2 naming it.
describe('spec diff: policy, filters and stdin on the command line', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'spec-diff-options-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, text: string) => {
    const file = path.join(dir, name);
    writeFileSync(file, text);
    return file;
  };
  const doc = (edit: (d: Json) => void = () => {}) => {
    const d = base();
    d.paths['/internal/stats'] = { get: { operationId: 'stats', responses: { '200': { description: 'Stats' } } } };
    edit(d);
    return stringify(d);
  };
  const cli = (args: string[], input?: string) => {
    const r = spawnSync(process.execPath, [path.join(projectRoot, 'scripts', 'spec-diff', 'run.mjs'), ...args], {
      cwd: dir,
      encoding: 'utf8',
      ...(input !== undefined ? { input } : {}),
    });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr.replace(/spec:diff: building.*\n/, '') };
  };
  const a = write('a.yaml', doc());
  // the maximum of limit lowered (error), and the internal operation removed (error)
  const b = write(
    'b.yaml',
    doc((d) => {
      list(d).parameters[0].schema.maximum = 50;
      delete d.paths['/internal/stats'];
    }),
  );
  const json = (args: string[], input?: string) =>
    JSON.parse(cli([...args, '--format', 'json'], input).stdout) as { changes: Json[]; off: Json[] };

  test('when a policy file sits beside NEW, then it is read, and --policy none or another file is what is asked for', () => {
    const specDir = path.join(dir, 'spec');
    spawnSync('mkdir', ['-p', specDir]);
    const newFile = path.join(specDir, 'openapi.yaml');
    writeFileSync(
      newFile,
      doc((d) => (list(d).parameters[0].schema.maximum = 50)),
    );
    writeFileSync(
      path.join(specDir, 'spec-diff-policy.yaml'),
      'rules:\n  request-maximum-lowered: { level: off, reason: Clients clamp limit themselves. }\n',
    );
    const beside = cli([a, newFile]);
    expect(beside.status).toBe(0);
    expect(beside.stdout).toContain('OFF (policy)      request-maximum-lowered (1): Clients clamp limit themselves.');
    expect(cli([a, newFile, '--policy', 'none']).status).toBe(1);
    const raised = write('raise.yaml', 'rules:\n  request-maximum-lowered: { level: warning, reason: checked by hand }\n');
    expect(json([a, newFile, '--policy', raised]).changes).toEqual([
      expect.objectContaining({ rule: 'request-maximum-lowered', level: 'warning', policy: { from: 'error', reason: 'checked by hand' } }),
    ]);
  }, 60_000);

  test('when a policy names a rule the table lacks or gives no reason, then the run exits 2 naming the entry', () => {
    const typo = write('typo.yaml', 'rules:\n  request-maximum-lowerd: { level: off, reason: x }\n');
    expect(cli([a, b, '--policy', typo])).toEqual({
      status: 2,
      stdout: '',
      stderr: `cannot compare: ${typo}: /rules/request-maximum-lowerd: no rule request-maximum-lowerd in the rule table (docs/spec-diff.md lists every rule)\n`,
    });
    const bare = write('bare.yaml', 'rules:\n  request-maximum-lowered: { level: info }\n');
    expect(cli([a, b, '--policy', bare]).stderr).toContain('/rules/request-maximum-lowered/reason is missing');
    expect(cli([a, b, '--policy', path.join(dir, 'missing.yaml')]).status).toBe(2);
  }, 60_000);

  test('when paths are filtered by expression or by extension, then what is left out is neither added nor removed', () => {
    const rules = (args: string[]) => json([a, b, ...args]).changes.map((c) => `${c.operation} ${c.rule}`);
    expect(rules([]).sort()).toEqual(['GET /internal/stats operation-removed', 'GET /pets request-maximum-lowered']);
    expect(rules(['--unmatch-path', '^/internal/'])).toEqual(['GET /pets request-maximum-lowered']);
    expect(rules(['--match-path', '^/internal/'])).toEqual(['GET /internal/stats operation-removed']);
    const marked = write(
      'marked.yaml',
      doc((d) => (d.paths['/internal/stats'].get['x-internal'] = true)),
    );
    const gone = write(
      'gone.yaml',
      doc((d) => delete d.paths['/internal/stats']),
    );
    expect(json([marked, gone, '--filter-extension', 'x-internal']).changes).toEqual([]);
    expect(cli([a, b, '--match-path', '(']).stderr).toContain('--match-path: "(" is not a regular expression');
    expect(cli([a, b, '--filter-extension', 'internal']).status).toBe(2);
  }, 60_000);

  test('when the report is longer than a pipe holds and its reader is slow, then all of it is written before the exit', () => {
    // our spec against 1.0.0: about 96 KB of JSON, through a pipe (64 KB) read only after a pause
    const run = [process.execPath, path.join(projectRoot, 'scripts', 'spec-diff', 'run.mjs')];
    const files = [path.join(projectRoot, 'spec', 'released', '1.0.0.yaml'), path.join(projectRoot, 'spec', 'openapi.yaml')];
    const quoted = [...run, ...files, '--format', 'json', '--accepted', 'none'].map((a) => `'${a}'`).join(' ');
    spawnSync(process.execPath, [run[1]!, '--build'], { cwd: dir }); // built first: the pause must fall on the write
    const r = spawnSync('bash', ['-c', `${quoted} 2>/dev/null | (sleep 0.5; cat)`], { cwd: dir, encoding: 'utf8' });
    expect(r.stdout.length).toBeGreaterThan(65_536);
    expect((JSON.parse(r.stdout) as { changes: unknown[] }).changes.length).toBeGreaterThan(100);
  }, 60_000);

  test('when a document is read from stdin (-), then it is compared as its file would be; twice, or with a $ref to a file, is refused', () => {
    const fromFile = json([a, b]).changes;
    expect(json(['-', b], doc()).changes).toEqual(fromFile);
    expect(
      json(
        [a, '-', '--policy', 'none'],
        doc((d) => {
          list(d).parameters[0].schema.maximum = 50;
          delete d.paths['/internal/stats'];
        }),
      ).changes,
    ).toEqual(fromFile);
    expect(cli(['-', '-'], doc()).status).toBe(2);
    const split = doc((d) => (d.paths['/pets'].get.responses['200'].content['application/json'].schema = { $ref: './pet.yaml' }));
    expect(cli(['-', b], split).stderr).toContain('stdin must be whole');
  }, 60_000);
});
