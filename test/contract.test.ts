import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { checkGenerated, checkRelease, lintSpec } from '../scripts/contract/checks';
import { type Change, type ChangeClass, diffDocuments, formatChanges, loadDocument } from '../scripts/contract/diff';
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
const create = (d: Json) => d.paths['/pets'].post;
const get = (d: Json) => d.paths['/pets/{petId}'].get;
const createBody = (d: Json) => create(d).requestBody.content['application/json'].schema;
const petOut = (d: Json) => get(d).responses['200'].content['application/json'].schema;

function changesFor(edit: (d: Json) => void): Change[] {
  const edited = base();
  edit(edited);
  return diffDocuments(base(), edited, { today: TODAY });
}

const rules: [string, (d: Json) => void, string, ChangeClass][] = [
  // breaking
  ['an operation removed', (d) => delete d.paths['/orders'], 'operation-removed', 'breaking'],
  [
    'a path renamed',
    (d) => {
      d.paths['/animals'] = d.paths['/orders'];
      delete d.paths['/orders'];
    },
    'operation-removed',
    'breaking',
  ],
  ['a method removed', (d) => delete d.paths['/pets'].post, 'operation-removed', 'breaking'],
  [
    'a deprecated operation removed before its sunset',
    (d) => {
      get(d)['x-sunset'] = '2026-12-31';
      delete d.paths['/pets/{petId}'];
    },
    'operation-removed',
    'breaking',
  ],
  [
    'a required parameter added',
    (d) => list(d).parameters.push({ name: 'owner', in: 'query', required: true, schema: { type: 'string' } }),
    'request-required-parameter-added',
    'breaking',
  ],
  ['a parameter made required', (d) => (list(d).parameters[0].required = true), 'request-parameter-made-required', 'breaking'],
  ['a parameter removed', (d) => list(d).parameters.pop(), 'request-parameter-removed', 'breaking'],
  ['a parameter type changed', (d) => (list(d).parameters[0].schema.type = 'string'), 'request-type-changed', 'breaking'],
  ['a parameter enum value removed', (d) => list(d).parameters[1].schema.enum.pop(), 'request-enum-value-removed', 'breaking'],
  ['a parameter minimum raised', (d) => (list(d).parameters[0].schema.minimum = 5), 'request-minimum-raised', 'breaking'],
  ['a parameter maximum lowered', (d) => (list(d).parameters[0].schema.maximum = 50), 'request-maximum-lowered', 'breaking'],
  ['a parameter maxLength lowered', (d) => (createBody(d).properties.name.maxLength = 100), 'request-maxLength-lowered', 'breaking'],
  ['a parameter pattern added', (d) => (list(d).parameters[1].schema.pattern = '^[a-z]+$'), 'request-pattern-added', 'breaking'],
  ['a parameter default changed', (d) => (list(d).parameters[0].schema.default = 10), 'request-default-changed', 'breaking'],
  [
    'a request body made optional',
    (d) => {
      create(d).requestBody.required = false;
    },
    'request-body-made-optional',
    'non-breaking',
  ],
  [
    'a required body property added',
    (d) => {
      createBody(d).properties.owner = { type: 'string' };
      createBody(d).required.push('owner');
    },
    'request-required-property-added',
    'breaking',
  ],
  ['a body property made required', (d) => createBody(d).required.push('categoryId'), 'request-property-made-required', 'breaking'],
  ['a body property type changed', (d) => (createBody(d).properties.categoryId.type = 'string'), 'request-type-changed', 'breaking'],
  ['a body property enum narrowed', (d) => createBody(d).properties.status.enum.pop(), 'request-enum-value-removed', 'breaking'],
  [
    'a request content type removed',
    (d) => {
      create(d).requestBody.content = { 'application/xml': create(d).requestBody.content['application/json'] };
    },
    'request-content-type-removed',
    'breaking',
  ],
  ['a success response removed', (d) => delete get(d).responses['200'], 'success-response-removed', 'breaking'],
  [
    'a success status changed',
    (d) => {
      create(d).responses['200'] = create(d).responses['201'];
      delete create(d).responses['201'];
    },
    'success-response-status-changed',
    'breaking',
  ],
  ['a response property removed', (d) => delete petOut(d).properties.tag, 'response-property-removed', 'breaking'],
  ['a response property made optional', (d) => petOut(d).required.pop(), 'response-property-made-optional', 'breaking'],
  ['a response property type changed', (d) => (petOut(d).properties.id.type = 'string'), 'response-type-changed', 'breaking'],
  ['a response property made nullable', (d) => (petOut(d).properties.name.nullable = true), 'response-type-changed', 'breaking'],
  ['a response property format changed', (d) => (petOut(d).properties.id.format = 'int32'), 'response-format-changed', 'breaking'],
  [
    'a response content type removed',
    (d) => {
      get(d).responses['200'].content = {};
    },
    'response-content-type-removed',
    'breaking',
  ],
  ['a response header removed', (d) => delete create(d).responses['201'].headers.Location, 'response-header-removed', 'breaking'],
  [
    'the security of one operation changed',
    (d) => (d.paths['/orders'].get.security = [{ apiKey: [] }]),
    'security-requirement-changed',
    'breaking',
  ],
  [
    'security removed (anonymous access allowed)',
    (d) => {
      d.security = [];
    },
    'security-requirement-loosened',
    'non-breaking',
  ],
  [
    'a second way to authenticate allowed',
    (d) => {
      d.security = [{ bearerAuth: [] }, { apiKey: [] }];
    },
    'security-requirement-loosened',
    'non-breaking',
  ],
  [
    'a security scheme changed',
    (d) => (d.components.securitySchemes.bearerAuth = { type: 'apiKey', in: 'header', name: 'Authorization' }),
    'security-requirement-changed',
    'breaking',
  ],
  ['an operationId changed', (d) => (list(d).operationId = 'findPets'), 'operation-id-changed', 'breaking'],
  ['a sunset moved earlier', (d) => (get(d)['x-sunset'] = '2029-01-01'), 'sunset-moved-earlier', 'breaking'],
  ['the base path changed', (d) => (d.servers = [{ url: 'https://api.example/v2' }]), 'server-base-path-changed', 'breaking'],
  // non-breaking
  [
    'an optional parameter added',
    (d) => list(d).parameters.push({ name: 'owner', in: 'query', schema: { type: 'string' } }),
    'request-optional-parameter-added',
    'non-breaking',
  ],
  [
    'an optional body property added',
    (d) => (createBody(d).properties.nickname = { type: 'string' }),
    'request-property-added',
    'non-breaking',
  ],
  ['a request maximum raised', (d) => (list(d).parameters[0].schema.maximum = 500), 'request-maximum-raised', 'non-breaking'],
  ['a request minLength removed', (d) => delete createBody(d).properties.name.minLength, 'request-minLength-removed', 'non-breaking'],
  ['a request enum value added', (d) => list(d).parameters[1].schema.enum.push('reserved'), 'request-enum-value-added', 'non-breaking'],
  [
    'an operation added',
    (d) => (d.paths['/pets/{petId}'].delete = { operationId: 'deletePet', responses: { '204': { description: 'Gone' } } }),
    'operation-added',
    'non-breaking',
  ],
  ['a response property added', (d) => (petOut(d).properties.age = { type: 'integer' }), 'response-property-added', 'non-breaking'],
  ['a response added', (d) => (list(d).responses['503'] = { description: 'Down' }), 'response-added', 'non-breaking'],
  ['a description changed', (d) => (list(d).summary = 'List the animals'), 'description-changed', 'non-breaking'],
  [
    'a path parameter renamed (no URL changes)',
    (d) => {
      const item = d.paths['/pets/{petId}'];
      item.get.parameters[0].name = 'id';
      d.paths['/pets/{id}'] = item;
      delete d.paths['/pets/{petId}'];
    },
    '(none)',
    'non-breaking',
  ],
  // notices
  ['an operation deprecated', (d) => (list(d).deprecated = true), 'operation-deprecated', 'notice'],
  ['a sunset added', (d) => (list(d)['x-sunset'] = '2031-01-01'), 'sunset-added', 'notice'],
  ['a sunset moved later', (d) => (get(d)['x-sunset'] = '2031-12-05'), 'sunset-moved-later', 'notice'],
  ['an enum value added to a response', (d) => petOut(d).properties.status.enum.push('reserved'), 'response-enum-value-added', 'notice'],
];

describe('spec diff: each rule, with a pair of small documents', () => {
  test.each(rules.map(([what, edit, rule, cls]) => [`${what} → ${rule} (${cls})`, edit, rule, cls] as const))(
    'when the edit is %s, then the diff grades it as expected',
    (_what, edit, rule, cls) => {
      const changes = changesFor(edit);
      if (rule === '(none)') {
        expect(changes).toEqual([]);
        return;
      }
      expect(changes).toContainEqual(expect.objectContaining({ rule, class: cls }));
      if (cls !== 'breaking') expect(changes.filter((c) => c.class === 'breaking')).toEqual([]);
    },
  );

  // Rules whose starting point is not the base document: the edit makes the old one.
  const fromEditedOld: [string, (d: Json) => void, string, ChangeClass][] = [
    ['a request body made required', (d: Json) => (create(d).requestBody.required = false), 'request-body-made-required', 'breaking'],
    [
      'a security requirement added where there was none',
      (d: Json) => (d.paths['/orders'].get.security = []),
      'security-requirement-added',
      'breaking',
    ],
    [
      'a request parameter made optional',
      (d: Json) => (list(d).parameters[0].required = true),
      'request-parameter-made-optional',
      'non-breaking',
    ],
    ['a request body added as required', (d: Json) => delete create(d).requestBody, 'request-body-added-required', 'breaking'],
    ['an x-sunset withdrawn', (d: Json) => (list(d)['x-sunset'] = '2031-01-01'), 'sunset-removed', 'non-breaking'],
  ];
  test.each(fromEditedOld)('when the edit is %s, then the diff grades it as expected', (_what, editOld, rule, cls) => {
    const old = base();
    editOld(old);
    const changes = diffDocuments(old, base(), { today: TODAY });
    expect(changes).toContainEqual(expect.objectContaining({ rule, class: cls }));
  });

  test('when an operation is removed after its x-sunset date, then it is a notice, not breaking', () => {
    const old = base();
    get(old)['x-sunset'] = '2026-11-01';
    const edited = base();
    delete edited.paths['/pets/{petId}'];
    const changes = diffDocuments(old, edited, { today: TODAY });
    expect(changes).toEqual([
      expect.objectContaining({ rule: 'operation-removed-after-sunset', class: 'notice', operation: 'GET /pets/{petId}' }),
    ]);
  });

  test('when the documents are identical, then there are no changes', () => {
    expect(diffDocuments(base(), base(), { today: TODAY })).toEqual([]);
  });

  test('when a change is reported, then it says where it is: operation and JSON pointer', () => {
    const [change] = changesFor((d) => (list(d).parameters[0].schema.maximum = 50));
    expect(change).toEqual({
      class: 'breaking',
      rule: 'request-maximum-lowered',
      operation: 'GET /pets',
      pointer: '/paths/~1pets/get/parameters/0/schema',
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
      expect.objectContaining({ rule: 'response-type-changed', class: 'breaking' }),
    );
  });
});

describe('spec diff: documents and the command line', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'spec-diff-'));
  const write = (name: string, doc: Json | string) => {
    const file = path.join(dir, name);
    writeFileSync(file, typeof doc === 'string' ? doc : name.endsWith('.json') ? JSON.stringify(doc) : stringify(doc));
    return file;
  };
  const cli = (...args: string[]) => {
    const r = spawnSync(path.join(projectRoot, 'node_modules', '.bin', 'ts-node'), ['--transpile-only', 'scripts/spec-diff.ts', ...args], {
      cwd: projectRoot,
      encoding: 'utf8',
    });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  };

  test('when the documents are YAML and JSON with $refs, then the refs are resolved and they compare equal', async () => {
    const withRefs = base();
    withRefs.components.schemas = { Pet: pet() };
    get(withRefs).responses['200'].content['application/json'].schema = { $ref: '#/components/schemas/Pet' };
    const edited = structuredClone(withRefs);
    delete edited.components.schemas.Pet.properties.tag;
    const changes = diffDocuments(await loadDocument(write('refs.yaml', withRefs)), await loadDocument(write('refs-edited.json', edited)), {
      today: TODAY,
    });
    expect(changes).toContainEqual(expect.objectContaining({ rule: 'response-property-removed', operation: 'GET /pets/{petId}' }));
  });

  test('when an OpenAPI 3.1 type array changes, then the change is graded', async () => {
    const v31 = { ...base(), openapi: '3.1.0' };
    const edited = structuredClone(v31);
    petOut(edited).properties.name.type = ['string', 'null'];
    const changes = diffDocuments(await loadDocument(write('a31.yaml', v31)), await loadDocument(write('b31.yaml', edited)), {
      today: TODAY,
    });
    expect(changes).toContainEqual(
      expect.objectContaining({ rule: 'response-type-changed', class: 'breaking', message: 'type changed from string to null|string' }),
    );
  });

  test('when the CLI compares, then it exits 0 with nothing breaking, 1 with something breaking, 2 when a document cannot be compared', () => {
    const a = write('a.yaml', base());
    const b = write(
      'b.yaml',
      (() => {
        const d = base();
        list(d).parameters[0].schema.maximum = 50;
        return d;
      })(),
    );
    const c = write(
      'c.yaml',
      (() => {
        const d = base();
        list(d).summary = 'Changed';
        return d;
      })(),
    );
    expect(cli(a, c).status).toBe(0);
    const breaking = cli(a, b);
    expect(breaking.status).toBe(1);
    expect(breaking.stdout).toContain('BREAKING     GET /pets: maximum lowered: 100 → 50');
    const notYaml = cli(a, write('bad.yaml', 'openapi: [unclosed'));
    expect(notYaml.status).toBe(2);
    expect(notYaml.stderr).toContain('bad.yaml: cannot be read as YAML or JSON');
    const invalid = cli(a, write('invalid.yaml', { openapi: '3.0.3', info: { title: 'x' }, paths: {} }));
    expect(invalid.status).toBe(2);
    expect(invalid.stderr).toContain('invalid.yaml: is not valid OpenAPI 3.0.3');
    expect(cli(a, path.join(dir, 'missing.yaml')).status).toBe(2);
    expect(cli(a).status).toBe(2);
  });

  test('when --format json or --format markdown is asked for, then the changes come in that format', () => {
    const a = write('fa.yaml', base());
    const b = write(
      'fb.yaml',
      (() => {
        const d = base();
        delete d.paths['/orders'];
        return d;
      })(),
    );
    const json = JSON.parse(cli(a, b, '--format', 'json').stdout);
    expect(json).toEqual({
      breaking: true,
      changes: [
        expect.objectContaining({ class: 'breaking', rule: 'operation-removed', operation: 'GET /orders', pointer: '/paths/~1orders/get' }),
      ],
    });
    const md = cli(a, b, '--format=markdown').stdout;
    expect(md).toContain('| **breaking** | GET /orders | `/paths/~1orders/get` | operation removed | `operation-removed` |');
    expect(formatChanges([], 'markdown')).toContain('No changes.');
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
        '→ restore what the released contract promised (spec/released/1.0.0.yaml), or make a new major version: info.version 2.0.0 and every server URL ending in /v2',
      );
    });

    test('when 501 not_implemented is compared with the released 1.0.0, then it is additive: a documented response and a code clients may not know yet', async () => {
      const r = await checkRelease(path.join(projectRoot, 'spec', 'openapi.yaml'), undefined, new Date('2026-11-22'));
      expect(r.ok).toBe(true);
      expect(r.changes.filter((c) => c.class === 'breaking')).toEqual([]);
      expect(r.changes).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ class: 'non-breaking', rule: 'response-added', operation: 'GET /pets', message: 'response 501 added' }),
          expect.objectContaining({
            class: 'notice',
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
      expect(r.changes.filter((c) => c.class === 'breaking')).toEqual([]);
    });
  });
});
