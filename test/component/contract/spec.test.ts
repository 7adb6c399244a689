import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { errorCodeValues, petStatusValues } from '../../../generated/openapi';
import { createApp } from '../../../src/app';
import { checkHandlersMatchSpec, resolve } from '../../../src/contract/spec';
import { connect } from '../../../src/store/database/db';
import { handlers, stubOperations } from '../../../src/handlers';
import { projectRoot } from '../../../src/paths';
import { type Spec, loadSpec } from '../../../src/contract/spec';
import { withStores } from '../../../src/handlers';
import { createStores } from '../../../src/store';
import { checkGenerated } from '../../../scripts/contract/checks';
import { ContractChecker, type ReceivedResponse } from '../../../src/contract/contractChecker';
import { type TestApp, auth, captureLogs, startTestApp } from '../../support/harness';
import { oas31Errors } from '../../support/oas31';

let spec: Spec;
let doc: Record<string, any>;
beforeAll(async () => {
  spec = await loadSpec();
  doc = spec.document;
});
const op = (method: string, p: string) => doc.paths[p][method];

describe('spec/openapi.yaml says what the seed says', () => {
  test('when the spec is validated, then it is a valid OpenAPI 3.1 document (the server does not check this at start-up: this test and npm run contract do)', () => {
    expect(oas31Errors(doc)).toEqual([]);
  });

  test('when the spec is read, then it is OpenAPI 3.1.0, version 1.0.0 (as the seed says; additions since the released 1.0.0 stay compatible with it), every server ending in /v1, production and staging among them', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.0.0');
    expect(doc.servers.map((s: { url: string }) => new URL(s.url).pathname)).toEqual(['/v1', '/v1', '/v1']);
    expect(doc.servers.map((s: { description: string }) => s.description)).toEqual(expect.arrayContaining(['Production', 'Staging']));
    expect(spec.apiRoot).toBe('/v1');
  });

  test('when the spec is read, then it has three operations, tagged animals, under a global HTTP bearer scheme, each naming the scope its key needs', () => {
    // The seed's three operations; the webhook endpoints' (tagged webhooks) and the probes are the contract's own additions.
    const animals = [...spec.operations.values()]
      .filter((f) => op(f.method.toLowerCase(), f.path).tags?.includes('animals'))
      .map((f) => f.operationId);
    expect(animals.sort()).toEqual(['createPet', 'getPet', 'listPets']);
    expect(op('get', '/pets').operationId).toBe('listPets');
    expect(op('post', '/pets').operationId).toBe('createPet');
    expect(op('get', '/pets/{petId}').operationId).toBe('getPet');
    for (const o of [op('get', '/pets'), op('post', '/pets'), op('get', '/pets/{petId}')]) expect(o.tags).toEqual(['animals']);
    // OpenAPI 3.1: role names on the bearer requirement; the server reads them from here (OperationFacts.scopes).
    expect([op('get', '/pets').security, op('post', '/pets').security, op('get', '/pets/{petId}').security]).toEqual([
      [{ bearerAuth: ['pets:read'] }],
      [{ bearerAuth: ['pets:write'] }],
      [{ bearerAuth: ['pets:read'] }],
    ]);
    expect(['listPets', 'createPet', 'getPet'].map((id) => spec.operations.get(id)?.scopes)).toEqual([
      [['pets:read']],
      [['pets:write']],
      [['pets:read']],
    ]);
    expect(spec.scopes).toEqual(['pets:read', 'pets:write', 'webhooks:manage']);
    // The reference page shows no role names of an http scheme: each description says them, as the requirement does.
    for (const o of [op('get', '/pets'), op('post', '/pets'), op('get', '/pets/{petId}')])
      expect(o.description).toContain(`Needs a key with the scope \`${(o.security[0].bearerAuth as string[]).join('` and `')}\`.`);
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  test("when the schemas are read, then they have the seed's fields, types, formats and required lists", () => {
    const s = doc.components.schemas;
    expect(s.PetStatus).toMatchObject({ type: 'string', enum: ['available', 'pending', 'sold'] });
    expect(petStatusValues).toEqual(['available', 'pending', 'sold']);
    expect(s.NewPet.required).toEqual(['name', 'categoryId']);
    expect(s.NewPet.properties.name.type).toBe('string');
    expect(s.NewPet.properties.categoryId).toMatchObject({ type: 'integer', format: 'int64' });
    expect(s.NewPet.properties.status).toMatchObject({ allOf: [{ $ref: '#/components/schemas/PetStatus' }], default: 'available' });
    expect(s.Pet.allOf[0]).toEqual({ $ref: '#/components/schemas/NewPet' });
    expect(s.Pet.allOf[1].required).toContain('id');
    expect(s.Pet.allOf[1].properties.id).toMatchObject({ type: 'integer', format: 'int64' });
    expect(s.Pets).toMatchObject({ type: 'array', items: { $ref: '#/components/schemas/Pet' } });
    expect(s.Error.required).toEqual(['code', 'message', 'status']);
    expect(s.Error.properties.code.enum).toEqual([...errorCodeValues]);
    expect(s.Error.properties.status.type).toBe('integer');
  });

  test('when listPets is read, then limit is 1..100 default 20, status filters, 200 is Pets, 401 and 403 are documented', () => {
    const o = op('get', '/pets');
    expect(o.parameters[0]).toMatchObject({
      name: 'limit',
      in: 'query',
      required: false,
      schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
    });
    expect(o.parameters[1]).toMatchObject({
      name: 'status',
      in: 'query',
      required: false,
      schema: { $ref: '#/components/schemas/PetStatus' },
    });
    expect(o.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Pets' });
    expect(o.responses['401']).toEqual({ $ref: '#/components/responses/Unauthorized' });
    expect(o.responses['403']).toEqual({ $ref: '#/components/responses/Forbidden' });
  });

  test('when createPet is read, then its body is a required JSON NewPet, 201 is a Pet, 400, 401 and 403 are documented', () => {
    const o = op('post', '/pets');
    expect(o.requestBody.required).toBe(true);
    expect(Object.keys(o.requestBody.content)).toEqual(['application/json']);
    expect(o.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/NewPet' });
    expect(o.responses['201'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Pet' });
    expect(Object.keys(o.responses)).toEqual(expect.arrayContaining(['400', '401', '403']));
  });

  test('when getPet is read, then petId is int64, 200 is a Pet, 401, 403 and 404 are documented, and it is deprecated with its sunset and successor', () => {
    const o = op('get', '/pets/{petId}');
    expect(o.parameters[0]).toMatchObject({ name: 'petId', in: 'path', required: true, schema: { type: 'integer', format: 'int64' } });
    expect(o.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Pet' });
    expect(Object.keys(o.responses)).toEqual(expect.arrayContaining(['401', '403', '404']));
    expect(o.deprecated).toBe(true);
    expect(o['x-sunset']).toBe('2030-12-05');
    expect(o['x-successor']).toBe('listPets');
    expect(o.description).toContain('removed on 5 December 2030');
    expect(spec.operations.get('getPet')?.deprecationHeaders).toEqual({
      Deprecation: '@1795305600',
      Sunset: 'Thu, 05 Dec 2030 00:00:00 GMT',
      Link: '</v1/pets>; rel="successor-version", </docs/#/animals/getPet>; rel="deprecation"',
    });
  });

  test('when bodies are read, then every request body and every response with a body carries an example the mock can serve', () => {
    const missing: string[] = [];
    for (const [p, item] of Object.entries<any>(doc.paths)) {
      for (const [method, o] of Object.entries<any>(item).filter(([k]) => k !== 'servers' && k !== 'parameters')) {
        const media = o.requestBody?.content?.['application/json'];
        if (media && media.example === undefined) missing.push(`${method} ${p} request body`);
        for (const [status, r] of Object.entries<any>(o.responses)) {
          const response = r.$ref ? doc.components.responses[r.$ref.split('/').pop()] : r;
          const m = response.content?.['application/json'];
          if (m && m.example === undefined && m.examples === undefined) missing.push(`${method} ${p} ${status}`);
        }
      }
    }
    expect(missing).toEqual([]);
  });

  test('when the probes are read, then they live at the root of the host and under /v1 (where generated clients call them), need no key and are tagged operations', () => {
    for (const [p, id] of [
      ['/healthz', 'getHealth'],
      ['/readyz', 'getReadiness'],
    ] as const) {
      // The root first, where platforms probe; then the top-level servers, which generated clients use for every path.
      const servers = doc.paths[p].servers.map((s: { url: string }) => s.url);
      expect(servers.map((url: string) => new URL(url).pathname)).toEqual(['/', '/', '/', '/v1', '/v1', '/v1']);
      expect(servers.slice(3)).toEqual(doc.servers.map((s: { url: string }) => s.url));
      expect(op('get', p)).toMatchObject({ operationId: id, security: [], tags: ['operations'] });
      expect(op('get', p).description.replace(/\s+/g, ' ')).toContain(
        `at the root of the host (\`${p}\`) and under the API root (\`/v1${p}\`)`,
      );
      expect(spec.operations.get(id)?.fullPaths).toEqual([p, `/v1${p}`]);
      expect(spec.operations.get(id)?.fullPath).toBe(p);
    }
    expect(spec.keylessPaths).toEqual(new Set(['/v1/healthz', '/v1/readyz']));
    expect(spec.operations.get('listPets')?.fullPaths).toEqual(['/v1/pets']);
  });

  test('when any operation is read, then it documents 501 not_implemented, which a generated stub answers until it is filled in', () => {
    expect(doc.components.schemas.Error.properties.code.enum).toContain('not_implemented');
    for (const { operationId } of spec.operations.values()) {
      const o = Object.values(doc.paths)
        .flatMap((item: any) => Object.values(item))
        .find((x: any) => x.operationId === operationId) as any;
      expect([operationId, o.responses['501']]).toEqual([operationId, expect.anything()]);
    }
  });

  test('when any failure response is read, then it is the Error body as application/json', () => {
    for (const { operationId } of spec.operations.values()) {
      const o = Object.values(doc.paths)
        .flatMap((item: any) => Object.values(item))
        .find((x: any) => x.operationId === operationId) as any;
      for (const [status, r] of Object.entries<any>(o.responses)) {
        // Successes, and 304 (not modified: no body), are no failures.
        if (status.startsWith('2') || status === '304') continue;
        const response = r.$ref ? doc.components.responses[r.$ref.split('/').pop()] : r;
        expect(response.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
      }
    }
  });
});

describe('generated/ follows the spec', () => {
  test('when generated/ is checked, then openapi.ts and handlers.ts are what npm run generate makes of the spec today', async () => {
    const [generated, handlerCheck] = await checkGenerated(path.join(projectRoot, 'spec', 'openapi.yaml'));
    expect(generated).toMatchObject({ ok: true });
    expect(handlerCheck).toMatchObject({ ok: true });
  });

  test('when the spec changes and generate was not run, then the check fails and leaves generated/ alone', async () => {
    const before = readFileSync(path.join(projectRoot, 'generated', 'openapi.ts'), 'utf8');
    const dir = mkdtempSync(path.join(tmpdir(), 'spec-'));
    const edited = structuredClone(doc);
    edited.components.schemas.NewPet.properties.nickname = { type: 'string' };
    writeFileSync(path.join(dir, 'openapi.yaml'), stringify(edited));
    const [generated] = await checkGenerated(path.join(dir, 'openapi.yaml'));
    expect(generated).toEqual({
      name: 'generated',
      ok: false,
      // A new body property changes the types and the createPet tool's input schema.
      detail: expect.stringContaining('stale for the spec: generated/openapi.ts, generated/mcp-tools.ts\n→ run `npm run generate`'),
    });
    expect(readFileSync(path.join(projectRoot, 'generated', 'openapi.ts'), 'utf8')).toBe(before);
  });
});

describe('start-up refuses a spec and handlers that do not pair up', () => {
  test('when the registry is checked, then it pairs with the spec and no operation is a stub', () => {
    expect(() => checkHandlersMatchSpec(spec.operations.keys(), Object.keys(handlers))).not.toThrow();
    expect(stubOperations()).toEqual([]);
  });

  test('when handlers and operations do not pair up, then every operation without a handler and every handler without an operation is named', () => {
    expect(() => checkHandlersMatchSpec(['listPets', 'deletePet'], ['listPets', 'renamePet'])).toThrow(
      'The handlers do not match spec/openapi.yaml:\n  - operation deletePet in the spec has no handler in src/handlers/ (run `npm run generate` to write a stub)\n  - handler renamePet names no operation in the spec',
    );
  });

  test('when the spec gains an operation without a handler, then createApp refuses to build the app', async () => {
    const edited = structuredClone(doc);
    edited.paths['/pets/{petId}'].delete = {
      operationId: 'deletePet',
      tags: ['animals'],
      responses: { '204': { description: 'Deleted' } },
    };
    const dir = mkdtempSync(path.join(tmpdir(), 'spec-'));
    writeFileSync(path.join(dir, 'openapi.yaml'), stringify(edited));
    const sql = connect('postgres://postgres@127.0.0.1:1/none', { max: 1 });
    await expect(
      createApp({
        spec: await loadSpec(path.join(dir, 'openapi.yaml')),
        bootstrapKeys: ['k'.repeat(16)],
        handlers: withStores(createStores(sql, { idempotencyTtlSeconds: 86_400 })),
        logging: captureLogs('silent').logging,
      }),
    ).rejects.toThrow('operation deletePet in the spec has no handler');
    await sql.end();
  });
});

describe('the contract checker used by every test can fail', () => {
  let checker: ContractChecker;
  beforeAll(async () => {
    checker = await ContractChecker.create(spec);
  });
  const response = (status: number, body: unknown, headers: Record<string, string> = {}) =>
    ({ status, body, headers: { 'content-type': 'application/json; charset=utf-8', ...headers } }) satisfies ReceivedResponse;
  const pet = { id: 1, name: 'Rex', categoryId: 1, status: 'available' };
  const cached = { etag: '"AAAAAAAAAAAAAAAAAAAAAA"', 'cache-control': 'private, no-cache' };

  test('when a response conforms, then it passes', () => {
    expect(() => checker.check('get', '/v1/pets', response(200, [pet], cached))).not.toThrow();
    expect(() => checker.check('get', '/v1/pets', { status: 304, body: {}, text: '', headers: cached })).not.toThrow();
  });

  test.each([
    [
      'a Pet without id',
      'get',
      '/v1/pets',
      response(200, [{ name: 'Rex', categoryId: 1, status: 'available' }]),
      'does not match the listPets 200 schema',
    ],
    ['an id as a string', 'post', '/v1/pets', response(201, { ...pet, id: '1' }), 'does not match the createPet 201 schema'],
    ['an unknown status value', 'get', '/v1/pets', response(200, [{ ...pet, status: 'lost' }]), 'does not match'],
    ['an undocumented status', 'post', '/v1/pets', response(202, pet), 'status 202 is not documented for createPet'],
    [
      'an Error body with the wrong status',
      'get',
      '/v1/pets',
      response(400, { code: 'validation_failed', message: 'x', status: 422 }),
      'Error.status is 422',
    ],
    [
      'an Error code the spec does not list',
      'get',
      '/v1/pets',
      response(400, { code: 'oops', message: 'x', status: 400 }),
      'the body is not the Error schema',
    ],
    [
      'a 401 without WWW-Authenticate',
      'get',
      '/v1/pets',
      response(401, { code: 'unauthorized', message: 'x', status: 401 }),
      'required header(s) WWW-Authenticate missing',
    ],
    [
      'a 503 without Retry-After',
      'get',
      '/v1/pets',
      response(503, { code: 'service_unavailable', message: 'x', status: 503 }),
      'required header(s) Retry-After missing',
    ],
    [
      'a 429 without Retry-After',
      'post',
      '/v1/pets',
      response(429, { code: 'rate_limited', message: 'x', status: 429 }),
      'required header(s) Retry-After missing',
    ],
    [
      'getPet without Sunset',
      'get',
      '/v1/pets/1',
      response(200, pet, { ...cached, deprecation: '@1', link: '</v1/pets>; rel="successor-version"' }),
      'required header(s) Sunset missing',
    ],
    [
      'a page without its ETag',
      'get',
      '/v1/pets',
      response(200, [pet], { 'cache-control': 'private, no-cache' }),
      'required header(s) ETag missing',
    ],
    [
      'a page that may be stored by shared caches',
      'get',
      '/v1/pets',
      response(200, [pet], { ...cached, 'cache-control': 'public' }),
      'headers do not match',
    ],
    ['a weak ETag', 'get', '/v1/pets/1', response(200, pet, { ...cached, etag: 'W/"x"' }), 'headers do not match'],
    [
      'a 304 with a body',
      'get',
      '/v1/pets',
      { status: 304, body: [pet], text: JSON.stringify([pet]), headers: cached },
      'a 304 has a body',
    ],
    [
      'a 304 for createPet',
      'post',
      '/v1/pets',
      { status: 304, body: {}, text: '', headers: cached },
      'status 304 is not documented for createPet',
    ],
    ['a malformed RateLimit header', 'get', '/v1/pets', response(200, [pet], { ratelimit: 'lots' }), 'headers do not match'],
    [
      'a failure that is not JSON',
      'get',
      '/nowhere',
      { status: 404, body: {}, headers: { 'content-type': 'text/html' } } satisfies ReceivedResponse,
      'not application/json',
    ],
  ])('when the response has %s, then it is a violation', (_what, method, url, res, message) => {
    expect(() => checker.check(method, url, res)).toThrow(message);
  });
});

describe("the spec's examples say what the server sends", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  test('when an example is a 405, then the server answers that method on that operation with exactly its message and Allow', async () => {
    const checked = new Set<string>();
    for (const facts of t.spec.operations.values()) {
      const operation = resolve(doc as never, doc.paths[facts.path][facts.method.toLowerCase()]) as Record<string, any>;
      for (const [status, ref] of Object.entries<any>(operation.responses)) {
        const example = resolve(doc as never, ref).content?.['application/json']?.example;
        if (example?.code !== 'method_not_allowed') continue;
        const [, method, allow] = /^([A-Z]+) is not allowed here; allowed: (.+)$/.exec(example.message) ?? [];
        if (!method || !allow) throw new Error(`${facts.operationId} ${status}: a 405 example whose message names no method and Allow`);
        for (const at of facts.fullPaths) {
          const url = at.replace(/\{[^}]+\}/g, '1');
          const res = await t.api[method.toLowerCase() as 'delete' | 'post'](url).set(auth()).expect(405);
          expect({ url, message: res.body.message, allow: res.headers.allow }).toEqual({ url, message: example.message, allow });
          checked.add(`${method} ${url}`);
        }
      }
    }
    // Every example of a 405 was sent where it applies: /pets (both operations), /pets/{petId}, the webhook endpoints' three paths and the probes (at both their paths).
    expect([...checked].sort()).toEqual([
      'DELETE /v1/pets',
      'DELETE /v1/pets/1',
      'DELETE /v1/webhook-endpoints',
      'GET /v1/webhook-endpoints/1/rotate-secret',
      'POST /healthz',
      'POST /readyz',
      'POST /v1/healthz',
      'POST /v1/readyz',
      'PUT /v1/webhook-endpoints/1',
    ]);
  });
});
