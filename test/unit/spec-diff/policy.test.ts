import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gradeDocuments } from '../../../scripts/spec-diff';
import { filterDocument } from '../../../scripts/spec-diff/filter';
import { gate } from '../../../scripts/spec-diff/gate';
import { type Policy, PolicyFileError, readPolicy } from '../../../scripts/spec-diff/policy';
import { formatChanges } from '../../../scripts/spec-diff/report';
import { type Json, TODAY, base, list } from '../../support/petsDocument';

const dir = mkdtempSync(path.join(tmpdir(), 'spec-diff-policy-'));
let n = 0;
const policyFile = (text: string) => {
  const file = path.join(dir, `policy-${++n}.yaml`);
  writeFileSync(file, text);
  return file;
};
const refused = (text: string) => {
  try {
    readPolicy(policyFile(text));
  } catch (err) {
    if (err instanceof PolicyFileError) return err.message.replace(/^.*?: /, '');
    throw err;
  }
  return 'read';
};

/** A pair with two findings: limit's maximum lowered (request-maximum-lowered, error) and the status parameter removed (request-parameter-removed, error). */
const pair = (): [Json, Json] => {
  const o = base();
  const n = base();
  list(n).parameters[0].schema.maximum = 50;
  list(n).parameters.splice(1, 1);
  return [o, n];
};
const grade = (policy?: Policy) => {
  const [o, nw] = pair();
  return gradeDocuments(o, nw, { today: TODAY, ...(policy ? { policy } : {}) });
};

describe('spec diff policy: the file', () => {
  test('when an entry names a rule the table lacks, has no reason, or an unknown level, then it is refused naming it', () => {
    expect(refused('rules:\n  request-maximum-lowerd: { level: off, reason: typo }\n')).toBe(
      '/rules/request-maximum-lowerd: no rule request-maximum-lowerd in the rule table (docs/spec-diff.md lists every rule)',
    );
    expect(refused('rules:\n  request-maximum-lowered: { level: off }\n')).toBe(
      '/rules/request-maximum-lowered/reason is missing: say why the team grades request-maximum-lowered as off',
    );
    expect(refused("rules:\n  request-maximum-lowered: { level: off, reason: '  ' }\n")).toContain('/reason is missing');
    expect(refused('rules:\n  request-maximum-lowered: { level: fatal, reason: x }\n')).toBe(
      '/rules/request-maximum-lowered/level must be one of error, warning, info, off, got "fatal"',
    );
    expect(refused('extends: spectral\n')).toBe('/extends: "spectral" is no preset (presets: oasdiff)');
    expect(refused('rule:\n  x: 1\n')).toContain('unknown key rule');
    expect(refused('rules: [1]\n')).toContain('/rules must map rule ids');
    expect(refused('rules:\n  request-maximum-lowered: { level: off, reason: x, until: 2027 }\n')).toContain('unknown key until');
    expect(refused('')).toBe('read');
  });

  test('when a team turns one rule off and raises another, then those findings change and every other keeps the table’s level', () => {
    const policy = readPolicy(
      policyFile(`rules:
  request-parameter-removed: { level: off, reason: Our server ignores parameters it does not know. }
  response-enum-value-added: { level: error, reason: Terraform providers refuse unknown values. }
`),
    );
    const graded = grade(policy);
    expect(graded.changes.map((c) => [c.rule, c.level, c.policy])).toEqual([['request-maximum-lowered', 'error', undefined]]);
    expect(graded.off).toEqual([
      expect.objectContaining({
        rule: 'request-parameter-removed',
        level: 'error',
        policy: { from: 'error', reason: 'Our server ignores parameters it does not know.' },
      }),
    ]);
    const o = base();
    const enumAdded = base();
    list(enumAdded).responses['200'].content['application/json'].schema.items.properties.status.enum.push('reserved');
    expect(gradeDocuments(o, enumAdded, { today: TODAY, policy }).changes).toEqual([
      expect.objectContaining({
        rule: 'response-enum-value-added',
        level: 'error',
        policy: { from: 'warning', reason: 'Terraform providers refuse unknown values.' },
      }),
    ]);
    // without the policy, both as the table says
    expect(
      grade()
        .changes.map((c) => c.rule)
        .sort(),
    ).toEqual(['request-maximum-lowered', 'request-parameter-removed']);
  });

  test('when a policy sets a rule to its table level, then the finding is not marked as changed by it', () => {
    const policy = readPolicy(policyFile('rules:\n  request-maximum-lowered: { level: error, reason: as the default }\n'));
    expect(grade(policy).changes.every((c) => c.policy === undefined)).toBe(true);
  });

  test('when `extends: oasdiff`, then the preset’s levels apply and the file’s own entries override them', () => {
    const preset = readPolicy(policyFile('extends: oasdiff\n'));
    expect(preset.get('request-parameter-removed')).toEqual(expect.objectContaining({ level: 'warning' }));
    const own = readPolicy(policyFile('extends: oasdiff\nrules:\n  request-parameter-removed: { level: info, reason: ours }\n'));
    expect(own.get('request-parameter-removed')).toEqual(expect.objectContaining({ level: 'info', reason: 'ours' }));
    expect(own.size).toBe(preset.size);
  });

  test('when a policy changed findings, then JSON, JUnit, GitHub, Markdown and text say which, and why', () => {
    const policy = readPolicy(
      policyFile(`rules:
  request-parameter-removed: { level: off, reason: ignored by our server }
  request-maximum-lowered: { level: warning, reason: clients clamp }
`),
    );
    const [o, nw] = pair();
    const v = gate(o, nw, { today: TODAY, policy, scope: 'release' });
    expect(v.failed).toBe(false);
    const options = { off: v.off, policyFile: 'spec/spec-diff-policy.yaml' };
    const json = JSON.parse(formatChanges(v.changes, 'json', options));
    expect(json).toEqual(
      expect.objectContaining({
        failed: false,
        policy: 'spec/spec-diff-policy.yaml',
        counts: { error: 0, warning: 1, info: 0, accepted: 0, policy: 1, off: 1 },
        changes: [
          expect.objectContaining({
            rule: 'request-maximum-lowered',
            level: 'warning',
            policy: { from: 'error', reason: 'clients clamp' },
          }),
        ],
        off: [expect.objectContaining({ rule: 'request-parameter-removed' })],
      }),
    );
    const junit = formatChanges(v.changes, 'junit', options);
    expect(junit).toContain('[policy: error → warning: clients clamp]');
    expect(junit).toContain('<skipped message="off by policy (was error): ignored by our server"/>');
    const gh = formatChanges(v.changes, 'github', options);
    expect(gh).toContain(
      'title=request-maximum-lowered (policy%3A error → warning)::GET /pets: maximum lowered: 100 → 50 [policy: error → warning: clients clamp]',
    );
    expect(gh).toContain(
      '::notice title=spec-diff-policy::1 finding(s) switched off by spec/spec-diff-policy.yaml: request-parameter-removed (1): ignored by our server',
    );
    const md = formatChanges(v.changes, 'markdown', options);
    expect(md).toContain('Passed: 0 error, 1 warning, 0 info (1 set by policy, 1 off by policy)');
    expect(md).toContain('| warning (policy; was error) | GET /pets |');
    expect(md).toContain('Switched off by the policy: request-parameter-removed (1): ignored by our server');
    expect(formatChanges(v.changes, 'text', options)).toContain('OFF (policy)      request-parameter-removed (1): ignored by our server');
  });
});

describe('spec diff filters', () => {
  const doc = (): Json => {
    const d = base();
    d.paths['/internal/stats'] = { get: { operationId: 'stats', responses: { '200': { description: 'ok' } } } };
    d.paths['/pets'].post['x-internal'] = true;
    return d;
  };
  const ops = (d: Json) =>
    Object.entries<Json>(d.paths).flatMap(([p, item]) =>
      Object.keys(item)
        .filter((k) => k !== 'parameters')
        .map((m) => `${m} ${p}`),
    );

  test('when --match-path or --unmatch-path is given, then only the paths kept are compared', () => {
    expect(ops(filterDocument(doc(), { matchPath: /^\/internal\// }))).toEqual(['get /internal/stats']);
    expect(ops(filterDocument(doc(), { unmatchPath: /^\/internal\// }))).not.toContain('get /internal/stats');
  });

  test('when --filter-extension is given, then operations and path items with a truthy value are left out, and a false one kept', () => {
    const d = doc();
    d.paths['/internal/stats']['x-internal'] = true;
    d.paths['/pets'].get['x-internal'] = false;
    const kept = filterDocument(d, { extension: 'x-internal' });
    expect(ops(kept)).toEqual(['get /pets', 'get /pets/{petId}', 'get /orders']);
    expect(d.paths['/pets'].post).toBeDefined(); // the document itself is not changed
  });

  test('when an operation left out by the filter is removed in the new document, then nothing is reported', () => {
    const o = doc();
    const nw = doc();
    delete nw.paths['/pets'].post;
    delete nw.paths['/internal/stats'];
    const filter = { extension: 'x-internal', unmatchPath: /^\/internal\// };
    expect(gradeDocuments(filterDocument(o, filter), filterDocument(nw, filter), { today: TODAY }).changes).toEqual([]);
    expect(gradeDocuments(o, nw, { today: TODAY }).changes.map((c) => c.rule)).toEqual(['operation-removed', 'operation-removed']);
  });
});
