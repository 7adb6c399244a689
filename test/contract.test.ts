import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { checkGenerated, checkRelease, lintSpec, spectralLint } from '../scripts/contract/checks';
import { type Change, diffDocuments, loadDocument } from '../scripts/contract/diff';
import { formatChanges } from '../scripts/contract/diff/report';
import { largeSpec } from '../scripts/bench/spec-diff';
import { scratchProject } from './support/scratch';
import { projectRoot } from '../src/paths';

type Json = Record<string, any>;

// A small document in the shape of ours, written out (no $refs) so each rule's edit is plain.
const pet = () => ({
  type: 'object',
  required: ['id', 'name', 'status'],
  properties: {
    id: { type: 'integer', format: 'int64' },
    name: { type: 'string', maxLength: 200 },
    status: { type: 'string', enum: ['available', 'pending', 'sold'] },
    tag: { type: 'string' },
  },
});
const newPet = () => ({
  type: 'object',
  required: ['name'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 200 },
    categoryId: { type: 'integer', format: 'int64', minimum: 1 },
    status: { type: 'string', enum: ['available', 'pending', 'sold'], default: 'available' },
  },
});
const base = (): Json => ({
  openapi: '3.0.3',
  info: { title: 'Pets', version: '1.0.0', description: 'Pets.' },
  servers: [{ url: 'https://api.example/v1' }],
  security: [{ bearerAuth: [] }],
  components: {
    securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' }, apiKey: { type: 'apiKey', in: 'header', name: 'X-Key' } },
  },
  paths: {
    '/pets': {
      get: {
        operationId: 'listPets',
        summary: 'List',
        parameters: [
          { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } },
          { name: 'status', in: 'query', required: false, schema: { type: 'string', enum: ['available', 'pending', 'sold'] } },
        ],
        responses: {
          '200': { description: 'Pets', content: { 'application/json': { schema: { type: 'array', items: pet() } } } },
          '401': { description: 'No key' },
        },
      },
      post: {
        operationId: 'createPet',
        requestBody: { required: true, content: { 'application/json': { schema: newPet() } } },
        responses: {
          '201': {
            description: 'Created',
            headers: { Location: { schema: { type: 'string' } } },
            content: { 'application/json': { schema: pet() } },
          },
          '400': { description: 'Bad' },
        },
      },
    },
    '/pets/{petId}': {
      get: {
        operationId: 'getPet',
        deprecated: true,
        'x-sunset': '2030-12-05',
        parameters: [{ name: 'petId', in: 'path', required: true, schema: { type: 'integer', format: 'int64' } }],
        responses: { '200': { description: 'Pet', content: { 'application/json': { schema: pet() } } }, '404': { description: 'None' } },
      },
    },
    '/orders': { get: { operationId: 'listOrders', responses: { '200': { description: 'Orders' } } } },
  },
});

const TODAY = new Date('2026-11-22T12:00:00Z');
const list = (d: Json) => d.paths['/pets'].get;
const get = (d: Json) => d.paths['/pets/{petId}'].get;
const petOut = (d: Json) => get(d).responses['200'].content['application/json'].schema;

function changesFor(edit: (d: Json) => void): Change[] {
  const edited = base();
  edit(edited);
  return diffDocuments(base(), edited, { today: TODAY });
}

describe('spec diff: where and how a change is reported', () => {
  test('when the documents are identical, then there are no changes', () => {
    expect(diffDocuments(base(), base(), { today: TODAY })).toEqual([]);
  });

  test('when a change is reported, then it says where it is: operation and JSON pointer, level and rule', () => {
    const [change] = changesFor((d) => (list(d).parameters[0].schema.maximum = 50));
    expect(change).toEqual({
      level: 'error',
      rule: 'request-maximum-lowered',
      operation: 'GET /pets',
      pointer: '/paths/~1pets/get/parameters/0/schema/maximum',
      side: 'new',
      message: 'maximum lowered: 100 → 50',
    });
  });

  test('when schemas are allOf compositions, then they are compared property by property', () => {
    const old = base();
    const edited = base();
    petOut(old).properties = {};
    petOut(old).allOf = [{ type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] }];
    petOut(edited).properties = {};
    petOut(edited).allOf = [{ type: 'object', properties: { id: { type: 'string' } }, required: ['id'] }];
    expect(diffDocuments(old, edited, { today: TODAY })).toContainEqual(
      expect.objectContaining({ rule: 'response-type-changed', level: 'error' }),
    );
  });

  test('when an operation is removed after its x-sunset date, then it is info, not an error', () => {
    const old = base();
    get(old)['x-sunset'] = '2026-11-01';
    const edited = base();
    delete edited.paths['/pets/{petId}'];
    expect(diffDocuments(old, edited, { today: TODAY })).toEqual([
      expect.objectContaining({ rule: 'operation-removed-after-sunset', level: 'info', operation: 'GET /pets/{petId}', side: 'old' }),
    ]);
  });
});

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
      ['--transpile-only', path.join(projectRoot, 'scripts', 'spec-diff.ts'), ...args],
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
    expect(cli([a, write('swagger.yaml', { swagger: '2.0' })]).stderr).toContain('only 3.0.x and 3.1.x are compared');
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
      counts: { error: 1, warning: 0, info: 0, accepted: 0 },
      changes: [
        expect.objectContaining({
          level: 'error',
          rule: 'operation-removed',
          operation: 'GET /orders',
          pointer: '/paths/~1orders/get',
          side: 'old',
        }),
      ],
      problems: [],
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

describe('npm run contract', () => {
  const spec = readFileSync(path.join(projectRoot, 'spec', 'openapi.yaml'), 'utf8');
  const dir = mkdtempSync(path.join(tmpdir(), 'contract-'));
  const specWith = (name: string, edit: (text: string) => string) => {
    const file = path.join(dir, `${name}.yaml`);
    const edited = edit(spec);
    if (edited === spec) throw new Error(`edit ${name} changed nothing`);
    writeFileSync(file, edited);
    return file;
  };

  test('when the repository is checked out, then the released 1.0.0 is in it', () => {
    expect(readFileSync(path.join(projectRoot, 'spec', 'released', '1.0.0.yaml'), 'utf8')).toContain('version: 1.0.0');
  });

  test('when run on the spec as it is, then every check passes', () => {
    const r = spawnSync('npm', ['run', '-s', 'contract'], { cwd: projectRoot, encoding: 'utf8' });
    expect(r.stdout).toContain('✓ owasp: spec/openapi.yaml passes spectral:oas and the OWASP API Security ruleset (spec/.spectral.yaml)\n');
    expect(r.stdout).toContain('contract: all checks passed');
    expect(r.status).toBe(0);
  }, 60_000);

  test('when an operation has no handler, then it fails, saying what to do', () => {
    const file = specWith('unhandled', (s) =>
      s.replace(
        '  /pets/{petId}:\n',
        "  /pets/{petId}/photos:\n    get:\n      operationId: listPhotos\n      summary: Photos\n      description: Photos.\n      tags: [animals]\n      parameters:\n        - { name: petId, in: path, required: true, schema: { type: integer } }\n      responses:\n        '200': { description: Photos }\n        '401': { $ref: '#/components/responses/Unauthorized' }\n  /pets/{petId}:\n",
      ),
    );
    const r = spawnSync(
      path.join(projectRoot, 'node_modules', '.bin', 'ts-node'),
      ['--transpile-only', 'scripts/contract.ts', '--spec', file],
      { cwd: projectRoot, encoding: 'utf8' },
    );
    expect(r.status).toBe(1);
    expect(r.stdout).toContain(
      '✗ handlers: no handler for: src/handlers/listPhotos.ts\n    → run `npm run generate` to write a stub for each, then fill it in',
    );
    expect(r.stdout).toContain(
      '✗ generated: stale for the spec: generated/openapi.ts, generated/handlers.ts\n    → run `npm run generate`',
    );
  }, 60_000);

  test('when the generated and handler checks run in-process, then both pass', async () => {
    expect(await checkGenerated(path.join(projectRoot, 'spec', 'openapi.yaml'))).toEqual([
      { name: 'generated', ok: true, detail: expect.any(String) },
      { name: 'handlers', ok: true, detail: 'every operation has a handler: getHealth, getReadiness, listPets, createPet, getPet' },
    ]);
  });

  test('when the spec breaks our conventions, then the linter says so', () => {
    const r = lintSpec(specWith('snake', (s) => s.replace('operationId: listPets', 'operationId: list_pets')));
    expect(r.ok).toBe(false);
    expect(r.detail).toContain('operationId must be camelCase');
  });

  test('when the contract loses a bound or gains a numeric id on a new path, then the OWASP check fails, naming the rule; the exceptions stay on their own paths', () => {
    const project = scratchProject();
    try {
      project.write(
        'spec/openapi.yaml',
        spec
          .replace('      maxItems: 100\n', '')
          .replace(
            '  /pets/{petId}:\n',
            "  /pets/{petId}/photos/{photoId}:\n    get:\n      operationId: getPhoto\n      summary: Photo\n      description: Photo.\n      tags: [animals]\n      parameters:\n        - { name: petId, in: path, required: true, schema: { type: integer, format: int64, minimum: 1, maximum: 9007199254740991 } }\n        - { name: photoId, in: path, required: true, schema: { type: integer, format: int64, minimum: 1, maximum: 9007199254740991 } }\n      responses:\n        '401': { $ref: '#/components/responses/Unauthorized' }\n  /pets/{petId}:\n",
          ),
      );
      const r = spectralLint(project.file('spec/openapi.yaml'));
      expect(r.ok).toBe(false);
      expect(r.detail).toMatch(/error +owasp:api4:2023-array-limit/);
      expect(r.detail).toMatch(/error +owasp:api1:2023-no-numeric-ids/);
      expect(r.detail).toMatch(/an exception goes in \S*spec\/\.spectral\.yaml, for that path only, with its reason/);
    } finally {
      project.remove();
    }
  }, 60_000);

  test('when an operation has an x-stability-level other than experimental, beta or stable, then the linter refuses it', () => {
    const marked = (level: string) =>
      specWith(`stability-${level}`, (s) => s.replace('operationId: listPets', `operationId: listPets\n      x-stability-level: ${level}`));
    expect(lintSpec(marked('beta')).ok).toBe(true);
    const r = lintSpec(marked('alpha'));
    expect(r.ok).toBe(false);
    expect(r.detail).toContain('x-stability-level must be experimental, beta or stable');
  });

  test('when a breaking change is listed in spec/accepted-changes.yaml, then contract:release ships it, appends the changelog and consumes the entry; an expired entry fails npm run contract', () => {
    const project = scratchProject();
    try {
      project.write('spec/openapi.yaml', spec.replace('version: 1.0.0', 'version: 1.1.0').replace('maximum: 100\n', 'maximum: 50\n'));
      const entry = (expires: string) =>
        `accepted:\n  - rule: request-maximum-lowered\n    operation: GET /pets\n    reason: No client asks for more than 50.\n    expires: ${expires}\n`;
      project.write('spec/accepted-changes.yaml', `# kept comment\n${entry('2020-01-01')}`);
      const expired = project.run(['ts-node', '--transpile-only', 'scripts/contract.ts']);
      expect(expired.stdout).toContain('expired on 2020-01-01: fix the change, or renew the entry');
      expect(expired.status).toBe(1);
      project.write('spec/accepted-changes.yaml', `# kept comment\n${entry('2099-01-01')}`);
      const released = project.run(['ts-node', '--transpile-only', 'scripts/contract-release.ts']);
      expect(released.stderr).toBe('');
      expect(released.stdout).toContain('released 1.1.0 as spec/released/1.1.0.yaml (after 1.0.0)');
      expect(project.read('spec/accepted-changes.yaml')).toBe('# kept comment\naccepted: []\n');
      const changelog = project.read('spec/CHANGELOG.md');
      expect(changelog).toContain('## 1.0.0 (2026-11-22)');
      expect(changelog).toMatch(
        /## 1\.1\.0 \(\d{4}-\d{2}-\d{2}\), after 1\.0\.0\n\n### Breaking changes shipped on purpose \(accepted\)\n\n- `GET \/pets`: maximum lowered: 100 → 50 \[accepted until 2099-01-01: No client asks for more than 50\.\] \(`request-maximum-lowered`\)\n/,
      );
      expect(project.read('spec/released/1.1.0.yaml')).toContain('maximum: 50');
    } finally {
      project.remove();
    }
  }, 120_000);

  describe('against the released 1.0.0', () => {
    test.each([
      ['limit maximum lowered', (s: string) => s.replace('maximum: 100\n', 'maximum: 50\n')],
      ['a status value removed', (s: string) => s.replace('enum: [available, pending, sold]', 'enum: [available, sold]')],
      [
        'categoryId no longer an integer',
        (s: string) => s.replace('categoryId:\n          type: integer', 'categoryId:\n          type: string'),
      ],
      [
        'getPet removed before its sunset',
        (s: string) =>
          s.replace('  /pets/{petId}:\n    get:\n      operationId: getPet', '  /pets/{petId}:\n    get:\n      operationId: getPetById'),
      ],
      ['the sunset moved earlier', (s: string) => s.replace("x-sunset: '2030-12-05'", "x-sunset: '2029-12-05'")],
      [
        'security dropped',
        (s: string) =>
          s
            .replace('security:\n  - bearerAuth: []\n', 'security:\n  - apiKeyHeader: []\n')
            .replace('  securitySchemes:\n', '  securitySchemes:\n    apiKeyHeader: { type: apiKey, in: header, name: X-API-Key }\n'),
      ],
    ])('when %s, then the release check fails, naming the change and what to do', async (name, edit) => {
      const r = await checkRelease(specWith(name.replace(/\W+/g, '-'), edit), undefined, new Date('2026-11-22'));
      expect(r.ok).toBe(false);
      expect(r.detail).toContain('breaking change(s) against the released 1.0.0');
      expect(r.detail).toContain(
        '→ restore what the released contract promised (spec/released/1.0.0.yaml), make a new major version (info.version 2.0.0 and every server URL ending in /v2), or list the change in ',
      );
    });

    test('when 501 not_implemented is compared with the released 1.0.0, then it is additive: a documented response and a code clients may not know yet', async () => {
      const r = await checkRelease(path.join(projectRoot, 'spec', 'openapi.yaml'), undefined, new Date('2026-11-22'));
      expect(r.ok).toBe(true);
      expect(r.changes.filter((c) => c.level === 'error')).toEqual([]);
      expect(r.changes).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ level: 'info', rule: 'response-added', operation: 'GET /pets', message: 'response 501 added' }),
          expect.objectContaining({
            level: 'warning',
            rule: 'response-enum-value-added',
            message: expect.stringContaining('not_implemented'),
          }),
        ]),
      );
    });

    test('when the same breaking change comes with a new major version and base path, then it passes', async () => {
      const r = await checkRelease(
        specWith('v2', (s) =>
          s.replace('maximum: 100\n', 'maximum: 50\n').replace('version: 1.0.0', 'version: 2.0.0').replace(/\/v1$/gm, '/v2'),
        ),
        undefined,
        new Date('2026-11-22'),
      );
      expect(r).toMatchObject({ ok: true, detail: expect.stringContaining('a new major version (2.0.0) over 1.0.0') });
    });

    test('when a new major version keeps the old base path, then it fails', async () => {
      const r = await checkRelease(specWith('v2-path', (s) => s.replace('version: 1.0.0', 'version: 2.0.0')));
      expect(r.ok).toBe(false);
      expect(r.detail).toContain('info.version is 2.0.0, so every server URL must end in /v2');
    });

    test.each([
      [
        'an optional query parameter added',
        (s: string) =>
          s.replace(
            '        - name: status\n          in: query',
            '        - name: sort\n          in: query\n          required: false\n          description: Sort order.\n          schema: { type: string, enum: [id] }\n        - name: status\n          in: query',
          ),
      ],
      [
        'a response property added',
        (s: string) =>
          s.replace(
            '            id:\n              type: integer',
            '            createdAt:\n              type: string\n              format: date-time\n            id:\n              type: integer',
          ),
      ],
      ['the limit maximum raised', (s: string) => s.replace('maximum: 100\n', 'maximum: 200\n')],
      ['a description changed', (s: string) => s.replace('summary: List animals', 'summary: List the animals')],
      ['a minor version', (s: string) => s.replace('version: 1.0.0', 'version: 1.1.0')],
    ])('when %s, then the release check passes', async (name, edit) => {
      const r = await checkRelease(specWith(`ok-${name.replace(/\W+/g, '-')}`, edit), undefined, new Date('2026-11-22'));
      expect(r).toMatchObject({ ok: true });
      expect(r.changes.filter((c) => c.level === 'error')).toEqual([]);
    });
  });
});
