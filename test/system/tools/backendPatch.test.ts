import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import OpenAPIBackend from 'openapi-backend';
import { backendOptions } from '../../../src/contract/backend';
import { type Spec, loadSpec } from '../../../src/contract/spec';
import { projectRoot } from '../../../src/paths';

// patches/openapi-backend+*.patch makes the library do once what it did per request. It must
// not change what the library does: the same requests through the patched library and through
// the package as published, both built with the production options, must give the same
// matches, parses, validation results, coerced values and handler contexts.
const patchFile = readdirSync(path.join(projectRoot, 'patches')).find((f) => /^openapi-backend\+.*\.patch$/.test(f));
// Inside node_modules, so that the copy's own require()s find the same dependencies.
const unpatchedDir = path.join(projectRoot, 'node_modules', '.cache', 'openapi-backend-unpatched');

let Unpatched: typeof OpenAPIBackend;
beforeAll(() => {
  if (!patchFile) throw new Error('no openapi-backend patch in patches/: drop this test with the patch');
  // The package as published, at the installed version (npm serves it from its cache after an install).
  const { version } = JSON.parse(readFileSync(path.join(projectRoot, 'node_modules', 'openapi-backend', 'package.json'), 'utf8')) as {
    version: string;
  };
  rmSync(unpatchedDir, { recursive: true, force: true });
  mkdirSync(unpatchedDir, { recursive: true });
  const tarball = execFileSync('npm', ['pack', `openapi-backend@${version}`, '--pack-destination', unpatchedDir, '--silent'], {
    cwd: projectRoot,
    encoding: 'utf8',
  })
    .trim()
    .split('\n')
    .at(-1) as string;
  execFileSync('tar', ['-xzf', path.join(unpatchedDir, tarball), '-C', unpatchedDir, '--strip-components=1']);
  // Its dependencies are the installed ones (same lockfile); its own nested ones too.
  cpSync(path.join(projectRoot, 'node_modules', 'openapi-backend', 'node_modules'), path.join(unpatchedDir, 'node_modules'), {
    recursive: true,
  });
  // The published package, unpacked at run time: only require() can load it from there.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  Unpatched = (require(path.join(unpatchedDir, 'index.js')) as { default: typeof OpenAPIBackend }).default;
}, 60_000);
afterAll(() => {
  if (existsSync(unpatchedDir)) rmSync(unpatchedDir, { recursive: true, force: true });
});

let spec: Spec;
beforeAll(async () => {
  spec = await loadSpec();
});
const make = async (Backend: typeof OpenAPIBackend) => {
  const api = new Backend(backendOptions(spec));
  await api.init();
  return api;
};

const headers = { authorization: 'Bearer x', 'content-type': 'application/json', host: 'localhost', cookie: 'a=1; b=2' };
const requests: [string, Record<string, unknown>][] = [
  ['listPets', { method: 'GET', path: '/v1/pets', query: {}, headers }],
  ['listPets, limit and status', { method: 'GET', path: '/v1/pets', query: { limit: '20', status: 'available' }, headers }],
  ['listPets, limit 0', { method: 'GET', path: '/v1/pets', query: { limit: '0' }, headers }],
  ['listPets, limit repeated', { method: 'GET', path: '/v1/pets', query: { limit: ['5', '6'] }, headers }],
  ['listPets, unknown parameter', { method: 'GET', path: '/v1/pets', query: { color: 'red' }, headers }],
  ['listPets, a parameter named __proto__', { method: 'GET', path: '/v1/pets', query: JSON.parse('{"__proto__":"1"}'), headers }],
  ['listPets, query as a string', { method: 'GET', path: '/v1/pets', query: '?limit=3&status=sold', headers }],
  ['listPets, query in the path', { method: 'GET', path: '/v1/pets?limit=4', headers }],
  ['listPets, trailing slash', { method: 'get', path: '/v1/pets/', query: { limit: '3' }, headers }],
  ['listPets, method in another case', { method: ' Get ', path: '/v1/pets', query: {}, headers }],
  ['getPet', { method: 'GET', path: '/v1/pets/12345', query: {}, headers }],
  ['getPet, not a number', { method: 'GET', path: '/v1/pets/abc', query: {}, headers }],
  ['getPet, encoded', { method: 'GET', path: '/v1/pets/%31%32', query: {}, headers }],
  ['getPet, two segments', { method: 'GET', path: '/v1/pets/1/2', query: {}, headers }],
  ['getPet, another method', { method: 'DELETE', path: '/v1/pets/1', query: {}, headers }],
  ['createPet', { method: 'POST', path: '/v1/pets', query: {}, headers, body: { name: 'Rex', categoryId: 3 } }],
  ['createPet, invalid', { method: 'POST', path: '/v1/pets', query: {}, headers, body: { name: '', categoryId: 'x', extra: true } }],
  ['createPet, no body', { method: 'POST', path: '/v1/pets', query: {}, headers }],
  ['createPet, body as text', { method: 'POST', path: '/v1/pets', query: {}, headers, body: '{"name":' }],
  [
    'createPet, Idempotency-Key',
    {
      method: 'POST',
      path: '/v1/pets',
      query: {},
      headers: { ...headers, 'idempotency-key': 'k-1' },
      body: { name: 'Rex', categoryId: 3 },
    },
  ],
  ['a probe', { method: 'GET', path: '/healthz', query: {}, headers }],
  ['an unknown path', { method: 'GET', path: '/v1/animals', query: {}, headers }],
  ['outside the API root', { method: 'GET', path: '/metrics', query: {}, headers }],
];

describe('openapi-backend, patched, answers as the unpatched library does (production options)', () => {
  let patched: OpenAPIBackend;
  let unpatched: OpenAPIBackend;
  beforeAll(async () => {
    [patched, unpatched] = await Promise.all([make(OpenAPIBackend), make(Unpatched)]);
  });

  test('when both are loaded, then the copy is the published package and the installed library is the patched one', () => {
    expect(Object.getOwnPropertyNames(Object.getPrototypeOf(unpatched.router))).not.toContain('getPathPattern');
    expect(Object.getOwnPropertyNames(Object.getPrototypeOf(patched.router))).toContain('getPathPattern');
  });

  test('when operations are asked for twice, then the same operations come back, in a fresh array each call', () => {
    expect(patched.router.getOperations()).toEqual(unpatched.router.getOperations());
    const first = patched.router.getOperations();
    first.pop();
    expect(patched.router.getOperations()).toHaveLength(first.length + 1);
  });

  test('when the definition is replaced after init, then the router sees the new one', async () => {
    const api = await make(OpenAPIBackend);
    // One operation per path it is served at (the probes at the root and under /v1).
    expect(api.router.getOperations()).toHaveLength([...spec.operations.values()].reduce((n, op) => n + op.fullPaths.length, 0));
    api.router.definition = { ...api.router.definition, paths: {} };
    expect(api.router.getOperations()).toEqual([]);
  });

  test('when path templates overlap, then they are matched in the same order (by specificity, then as written)', async () => {
    const op = (operationId: string) => ({ operationId, responses: { 200: { description: 'ok' } } });
    const definition = {
      openapi: '3.0.3',
      info: { title: 't', version: '1' },
      paths: {
        '/a/{x}/c': { get: op('xc') },
        '/a/b/{y}': { get: op('by'), post: op('byPost') },
        '/a/{x}/{z}': { get: op('xz'), put: op('xzPut') },
        '/a/b/c': { delete: op('exact') },
      },
    };
    const paths = ['/a/b/c', '/a/q/c', '/a/b/q', '/a/q/q', '/a/b/c/', '/a/b'];
    const methods = ['get', 'post', 'put', 'delete', 'patch'];
    const route = async (Backend: typeof OpenAPIBackend) => {
      const api = new Backend({ definition: structuredClone(definition) as never, quick: true });
      await api.init();
      return paths.flatMap((path) =>
        methods.map((method) => {
          try {
            return (api.router.matchOperation({ method, path, headers: {} }, true) as { operationId?: string }).operationId;
          } catch (err) {
            return String(err);
          }
        }),
      );
    };
    expect(await route(OpenAPIBackend)).toEqual(await route(Unpatched));
  });

  test('when parameters are arrays or JSON in the query and a body may be JSON or text, then requests validate as in the published library', async () => {
    const definition = {
      openapi: '3.0.3',
      info: { title: 't', version: '1' },
      paths: {
        '/things': {
          post: {
            operationId: 'things',
            parameters: [
              { name: 'tag', in: 'query', schema: { type: 'array', items: { type: 'string' } } },
              { name: 'one', in: 'query', schema: { type: 'string' } },
              { name: 'filter', in: 'query', content: { 'application/json': { schema: { type: 'object' } } } },
            ],
            requestBody: { content: { 'application/json': { schema: { type: 'object', required: ['a'] } } } },
            responses: { 200: { description: 'ok' } },
          },
          // A name declared twice: the first declaration decides whether a single value becomes an array.
          patch: {
            operationId: 'thingsTwice',
            parameters: [
              { name: 'tag', in: 'query', schema: { type: 'array', items: { type: 'string' } } },
              { name: 'tag', in: 'query', schema: { type: 'string' } },
            ],
            responses: { 200: { description: 'ok' } },
          },
          put: {
            operationId: 'thingsText',
            requestBody: { content: { 'application/json': { schema: { type: 'object' } }, 'text/plain': { schema: { type: 'string' } } } },
            responses: { 200: { description: 'ok' } },
          },
        },
      },
    };
    const validate = async (Backend: typeof OpenAPIBackend) => {
      const api = new Backend({ definition: structuredClone(definition) as never, quick: true });
      await api.init();
      const asked: [string, Record<string, unknown>][] = [
        ['things', { query: { tag: 'x', one: 'y' }, body: { a: 1 } }],
        ['things', { query: { tag: ['x', 'z'] }, body: {} }],
        ['things', { query: '?tag=x&filter=%7B%22a%22%3A1%7D', body: '{"a":1}' }],
        ['things', { query: '?filter=%7Bnot-json', body: '{"a":' }],
        ['thingsText', { query: {}, body: 'plain words' }],
        ['thingsTwice', { query: { tag: 'x' } }],
      ];
      return asked.map(([operationId, r]) => {
        const request = {
          method: { things: 'POST', thingsText: 'PUT', thingsTwice: 'PATCH' }[operationId],
          path: '/things',
          headers: { 'content-type': 'application/json' },
          ...r,
        };
        return api.validator.validateRequest(request as never, operationId);
      });
    };
    const [patchedResults, publishedResults] = [await validate(OpenAPIBackend), await validate(Unpatched)];
    expect(patchedResults).toEqual(publishedResults);
    // The cases do reach the branches: a single value valid as an array, and the JSON query parameter's parse error.
    expect(patchedResults[0]?.errors).toBeNull();
    expect(JSON.stringify(patchedResults[3]?.errors)).toContain('/query/filter');
  });

  test.each(requests)('when the request is %s, then the patched router parses it as the published one does', async (_what, request) => {
    const both = async <T>(f: (api: OpenAPIBackend) => T | Promise<T>) => [await f(patched), await f(unpatched)];
    const outcome = <T>(f: () => T) => {
      try {
        return { value: f() };
      } catch (err) {
        return { error: String(err) };
      }
    };
    const copy = () => structuredClone(request) as never;
    const [a, b] = await both((api) => outcome(() => api.router.matchOperation(copy(), true)?.operationId));
    expect(a).toEqual(b);
    const op = unpatched.router.matchOperation(copy());
    const [pa, pb] = await both((api) => outcome(() => api.router.parseRequest(copy(), op)));
    expect(pa).toEqual(pb);
    if (op) {
      const [va, vb] = await both((api) => outcome(() => api.validator.validateRequest(copy(), op.operationId as string)));
      expect(va).toEqual(vb);
    }
    // The whole of handleRequest: the context each library hands to the handler it calls.
    const [ca, cb] = await both(async (api) => {
      const seen: Record<string, unknown> = {};
      const capture = (name: string) => (c: { request: unknown; validation?: unknown; operation?: { operationId?: string } }) => {
        Object.assign(seen, { handler: name, request: c.request, validation: c.validation, operationId: c.operation?.operationId });
        return name;
      };
      const fresh = await make(api === patched ? OpenAPIBackend : Unpatched);
      fresh.register({
        notFound: capture('notFound'),
        methodNotAllowed: capture('methodNotAllowed'),
        validationFail: capture('validationFail'),
        unauthorizedHandler: capture('unauthorizedHandler'),
      });
      fresh.registerSecurityHandler('bearerAuth', () => true);
      for (const id of spec.operations.keys()) fresh.register(id, capture(id));
      const returned = await fresh.handleRequest(copy());
      return { returned, seen };
    });
    expect(ca).toEqual(cb);
  });
});
