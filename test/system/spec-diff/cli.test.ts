import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { diffDocuments, loadDocument } from '../../../scripts/spec-diff';
import { formatChanges } from '../../../scripts/spec-diff/report';
import { largeSpec } from '../../../scripts/spec-diff/bench';
import { type Json, TODAY, base, get, list, pet, petOut } from '../../support/petsDocument';
import { projectRoot } from '../../../src/paths';

describe('spec diff: documents and the command line', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'spec-diff-'));
  const write = (name: string, doc: Json | string) => {
    const file = path.join(dir, name);
    writeFileSync(file, typeof doc === 'string' ? doc : name.endsWith('.json') ? JSON.stringify(doc) : stringify(doc));
    return file;
  };
  const edited = (name: string, edit: (d: Json) => void) => {
    const d = base();
    edit(d);
    return write(name, d);
  };
  const cli = (args: string[], cwd = projectRoot) => {
    const r = spawnSync(
      path.join(projectRoot, 'node_modules', '.bin', 'ts-node'),
      ['--transpile-only', path.join(projectRoot, 'scripts', 'spec-diff', 'cli.ts'), ...args],
      {
        cwd,
        encoding: 'utf8',
      },
    );
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  const a = write('a.yaml', base());
  const lowered = edited('lowered.yaml', (d) => (list(d).parameters[0].schema.maximum = 50));

  test('when the documents are YAML and JSON with $refs, then the refs are resolved and they compare equal', async () => {
    const withRefs = base();
    withRefs.components.schemas = { Pet: pet() };
    get(withRefs).responses['200'].content['application/json'].schema = { $ref: '#/components/schemas/Pet' };
    const changed = structuredClone(withRefs);
    delete changed.components.schemas.Pet.properties.tag;
    const changes = diffDocuments(
      await loadDocument(write('refs.yaml', withRefs)),
      await loadDocument(write('refs-edited.json', changed)),
      { today: TODAY },
    );
    expect(changes).toContainEqual(expect.objectContaining({ rule: 'response-property-removed', operation: 'GET /pets/{petId}' }));
  });

  test('when an OpenAPI 3.1 type array gains null, then it is graded like 3.0 nullable', async () => {
    const v31 = { ...base(), openapi: '3.1.0' };
    const changed = structuredClone(v31);
    petOut(changed).properties.name.type = ['string', 'null'];
    const changes = diffDocuments(await loadDocument(write('a31.yaml', v31)), await loadDocument(write('b31.yaml', changed)), {
      today: TODAY,
    });
    expect(changes).toEqual([expect.objectContaining({ rule: 'response-nullable-added', level: 'error' })]);
  });

  test('when schemas refer to themselves ($ref cycles), then they are compared and the change inside is found', async () => {
    const tree = (maxLength: number) => {
      const d = base();
      d.components.schemas = {
        Node: {
          type: 'object',
          properties: { name: { type: 'string', maxLength }, children: { type: 'array', items: { $ref: '#/components/schemas/Node' } } },
        },
      };
      petOut(d).properties.tree = { $ref: '#/components/schemas/Node' };
      return d;
    };
    const changes = diffDocuments(await loadDocument(write('tree-a.yaml', tree(10))), await loadDocument(write('tree-b.yaml', tree(5))), {
      today: TODAY,
    });
    expect(changes).toEqual([
      expect.objectContaining({ rule: 'response-maxLength-lowered', pointer: expect.stringContaining('/properties/tree/properties/name') }),
    ]);
  });

  test('when a document uses constructs a strict validator once refused, then it is still compared', async () => {
    // Valid OpenAPI 3.0: a parameter written with content, a header with content, callbacks,
    // links, extensions, nullable without a type.
    const d = base();
    // A $ref with a sibling description (valid 3.0: the siblings are ignored) made the old
    // strict validator call the whole document unreadable (exit 2).
    d.components.schemas = { Any: { nullable: true, description: 'anything' }, Pet: pet() };
    get(d).responses['200'].content['application/json'].schema = { $ref: '#/components/schemas/Pet', description: 'The animal.' };
    list(d).parameters.push({ name: 'filter', in: 'query', content: { 'application/json': { schema: { type: 'object' } } } });
    list(d).callbacks = { onEvent: { '{$request.query.url}': { post: { responses: { '200': { description: 'ok' } } } } } };
    list(d).responses['200'].links = { next: { operationId: 'listPets', parameters: { limit: '$response.body#/0/id' } } };
    list(d).responses['200'].headers = { 'X-Meta': { content: { 'application/json': { schema: { type: 'object' } } } } };
    list(d)['x-internal'] = { reason: 'extension' };
    const doc = await loadDocument(write('constructs.yaml', d));
    expect(diffDocuments(doc, doc, { today: TODAY })).toEqual([]);
  });

  test('when the CLI compares, then it exits 0 below --fail-on, 1 at or above it, 2 when a document or an option cannot be read', () => {
    const reworded = edited('reworded.yaml', (d) => (list(d).summary = 'Changed'));
    const warning = edited('warning.yaml', (d) => petOut(d).properties.status.enum.push('reserved'));
    expect(cli([a, reworded]).status).toBe(0);
    const breaking = cli([a, lowered]);
    expect(breaking.status).toBe(1);
    expect(breaking.stdout).toContain('ERROR             GET /pets: maximum lowered: 100 → 50');
    expect(breaking.stdout).toContain('1 error, 0 warning, 0 info');
    expect(cli([a, warning]).status).toBe(0);
    expect(cli([a, warning, '--fail-on', 'warning']).status).toBe(1);
    const notYaml = cli([a, write('bad.yaml', 'openapi: [unclosed')]);
    expect(notYaml.status).toBe(2);
    expect(notYaml.stderr).toContain('bad.yaml: cannot be read as YAML or JSON');
    const invalid = cli([a, write('invalid.yaml', { openapi: '3.0.3', info: { title: 'x' }, paths: {} })]);
    expect(invalid.status).toBe(2);
    expect(invalid.stderr).toContain('invalid.yaml: is not valid OpenAPI 3.0.3: info.title and info.version must be strings');
    expect(cli([a, write('swagger.yaml', { swagger: '2.0' })]).stderr).toContain('only 3.0.x, 3.1.x and 3.2.x are compared');
    expect(cli([a, path.join(dir, 'missing.yaml')]).status).toBe(2);
    expect(cli([a]).status).toBe(2);
    expect(cli([a, a, '--fail-on', 'info']).stderr).toContain('--fail-on must be error or warning');
    expect(cli([a, a, '--format', 'xml']).status).toBe(2);
  });

  test('when --format json or markdown is asked for, then the changes come in that format', () => {
    const removed = edited('removed.yaml', (d) => delete d.paths['/orders']);
    const json = JSON.parse(cli([a, removed, '--format', 'json']).stdout);
    expect(json).toEqual({
      failed: true,
      failOn: 'error',
      counts: { error: 1, warning: 0, info: 0, accepted: 0, policy: 0, off: 0 },
      changes: [
        expect.objectContaining({
          level: 'error',
          rule: 'operation-removed',
          operation: 'GET /orders',
          pointer: '/paths/~1orders/get',
          side: 'old',
        }),
      ],
      off: [],
      problems: [],
      unused: [],
    });
    expect(cli([a, removed, '--format=markdown']).stdout).toContain(
      '| **error** | GET /orders | `/paths/~1orders/get` | operation removed | `operation-removed` |',
    );
    expect(formatChanges([], 'markdown')).toContain('No changes.');
  });

  test('when --format github is asked for, then each change is a workflow annotation on the line of the change (removals: the line they were on, in the message)', () => {
    const both = edited('both.yaml', (d) => {
      list(d).parameters[0].schema.maximum = 50;
      delete get(d).responses['404'];
    });
    const lines = readFileSync(both, 'utf8').split('\n');
    const out = cli([a, both, '--format', 'github']).stdout.trim().split('\n');
    const maxLine = lines.findIndex((l) => l.includes('maximum: 50')) + 1;
    expect(out).toContainEqual(
      `::error file=${path.relative(projectRoot, both)},line=${maxLine},title=request-maximum-lowered::GET /pets: maximum lowered: 100 → 50`,
    );
    const removal = out.find((l) => l.includes('title=error-response-removed'));
    const oldLine =
      readFileSync(a, 'utf8')
        .split('\n')
        .findIndex((l) => /^\s+['"]?404['"]?:/.test(l)) + 1;
    expect(oldLine).toBeGreaterThan(0);
    expect(removal).toMatch(
      /^::notice file=.*both\.yaml,line=\d+,title=error-response-removed::GET \/pets\/\{petId\}: response 404 no longer documented \(was at .*a\.yaml line (\d+)\)$/,
    );
    expect(removal).toContain(`a.yaml line ${oldLine})`);
  });

  test('when --format junit is asked for, then failing changes are JUnit failures and the rest pass', () => {
    const both = edited('junit.yaml', (d) => {
      list(d).parameters[0].schema.maximum = 50;
      list(d).summary = 'Changed';
    });
    const r = cli([a, both, '--format', 'junit']);
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?>\n<testsuites name="spec diff" tests="2" failures="1">/);
    expect(r.stdout).toContain(
      '<testcase classname="GET /pets" name="request-maximum-lowered /paths/~1pets/get/parameters/0/schema/maximum">\n      <failure type="error" message="maximum lowered: 100 → 50">',
    );
    expect(r.stdout).toContain('<system-out>info: summary changed</system-out>');
  });

  test('when --format changelog is asked for, then the changes are grouped by level under the new version', () => {
    const both = edited('changelog.yaml', (d) => {
      d.info.version = '1.1.0';
      list(d).parameters.push({ name: 'owner', in: 'query', schema: { type: 'string' } });
      petOut(d).properties.status.enum.push('reserved');
    });
    const r = cli([a, both, '--format', 'changelog', '--today', '2026-11-23']);
    expect(r.stdout).toBe(
      [
        '## 1.1.0 (2026-11-23)',
        '',
        '### Changes to check (warnings)',
        '',
        '- `GET /pets/{petId}`: enum value(s) "reserved" added to a response: clients that switch on this value may not handle them (`response-enum-value-added`)',
        '',
        '### Other changes',
        '',
        "- `GET /pets`: optional query parameter 'owner' added (`request-optional-parameter-added`)",
        '',
        '',
      ].join('\n'),
    );
  });

  test('when --accepted lists a breaking change, then it is reported as accepted and passes; an expired or unmatched entry fails, saying so', () => {
    const entry = {
      rule: 'request-maximum-lowered',
      operation: 'GET /pets',
      reason: 'Nobody asks for more than 50.',
      expires: '2027-06-30',
    };
    const ok = cli([a, lowered, '--accepted', write('accepted.yaml', { accepted: [entry] }), '--today', '2026-11-23']);
    expect(ok.status).toBe(0);
    expect(ok.stdout).toContain(
      'ERROR (accepted)  GET /pets: maximum lowered: 100 → 50 [accepted until 2027-06-30: Nobody asks for more than 50.]',
    );
    const expired = cli([
      a,
      lowered,
      '--accepted',
      write('expired.yaml', { accepted: [{ ...entry, expires: '2026-11-01' }] }),
      '--today',
      '2026-11-23',
    ]);
    expect(expired.status).toBe(1);
    expect(expired.stdout).toContain(
      'entry 1 (request-maximum-lowered on GET /pets) expired on 2026-11-01: fix the change, or renew the entry',
    );
    const unmatched = cli([
      a,
      lowered,
      '--accepted',
      write('unmatched.yaml', { accepted: [entry, { ...entry, operation: 'GET /orders' }] }),
      '--today',
      '2026-11-23',
    ]);
    expect(unmatched.status).toBe(1);
    expect(unmatched.stdout).toContain('entry 2 (request-maximum-lowered on GET /orders) matches no change: remove it');
    const invalid = cli([
      a,
      lowered,
      '--accepted',
      write('invalid-accepted.yaml', { accepted: [{ rule: 'no-such-rule', reason: 'x', expires: '2027-01-01' }] }),
    ]);
    expect(invalid.status).toBe(2);
    expect(invalid.stderr).toContain('/accepted/0/rule: no rule no-such-rule');
  });

  test('when --base names a git ref, then the old spec is read from git, split files included', () => {
    const repo = mkdtempSync(path.join(tmpdir(), 'spec-base-repo-'));
    const git = (...args: string[]) =>
      spawnSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd: repo, encoding: 'utf8' });
    git('init', '-q');
    const doc = base();
    doc.components.schemas = { Pet: { $ref: './pet.yaml' } };
    get(doc).responses['200'].content['application/json'].schema = { $ref: '#/components/schemas/Pet' };
    mkdirSync(path.join(repo, 'spec'));
    writeFileSync(path.join(repo, 'spec', 'openapi.yaml'), stringify(doc));
    writeFileSync(path.join(repo, 'spec', 'pet.yaml'), stringify(pet()));
    git('add', '.');
    git('commit', '-q', '-m', 'spec');
    const changedPet = pet();
    delete (changedPet.properties as Json).tag;
    writeFileSync(path.join(repo, 'spec', 'pet.yaml'), stringify(changedPet));
    const r = cli(['--base', 'HEAD', 'spec/openapi.yaml', '--format', 'github'], repo);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(
      /^::error file=spec\/pet\.yaml,line=6,title=response-property-removed::GET \/pets\/\{petId\}: property 'tag' removed \(was at HEAD:spec\/pet\.yaml line \d+\)$/m,
    );
    const unknown = cli(['--base', 'no-such-ref', 'spec/openapi.yaml'], repo);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain('no-such-ref:spec: cannot be read from git');
  });

  test('when a spec of 10,000 lines is compared with an edited copy, then every edit is found', async () => {
    const big = largeSpec(10_000);
    const old = write('big-a.yaml', big);
    const changed = structuredClone(big);
    changed.paths['/things17'].get.parameters[0].schema.maximum = 5;
    delete changed.paths['/things100'];
    // How long it takes is measured by npm run bench:spec-diff, not here.
    const changes = diffDocuments(await loadDocument(old), await loadDocument(write('big-b.yaml', changed)), { today: TODAY });
    expect(changes.map((c) => `${c.rule} ${c.operation}`).sort()).toEqual([
      'operation-removed GET /things100',
      'request-maximum-lowered GET /things17',
    ]);
  });
});
