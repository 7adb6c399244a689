import OpenAPIBackend from 'openapi-backend';
import { precompileRouting, precompileValidation } from '../src/routing';
import { loadSpec } from '../src/spec';
import { customizeAjv } from '../src/validation';

// src/routing.ts replaces openapi-backend's per-request routing, parse and validation with
// versions that do their fixed work once. They must give the library's results.
const spec = loadSpec();
const make = async (precompiled: boolean) => {
  const api = new OpenAPIBackend({
    definition: structuredClone(spec.routingDocument) as never,
    apiRoot: '/',
    strict: true,
    coerceTypes: true,
    ajvOpts: { allErrors: true, useDefaults: true },
    customizeAjv,
  });
  await api.init();
  if (precompiled) {
    precompileRouting(api);
    precompileValidation(api);
  }
  return api;
};

let library: OpenAPIBackend;
let ours: OpenAPIBackend;
beforeAll(async () => {
  [library, ours] = await Promise.all([make(false), make(true)]);
});

const headers = { authorization: 'Bearer x', 'content-type': 'application/json', host: 'localhost' };
const requests: [string, Record<string, unknown>][] = [
  ['listPets', { method: 'GET', path: '/v1/pets', query: {}, headers }],
  ['listPets, limit and status', { method: 'GET', path: '/v1/pets', query: { limit: '20', status: 'available' }, headers }],
  ['listPets, limit 0', { method: 'GET', path: '/v1/pets', query: { limit: '0' }, headers }],
  ['listPets, limit repeated', { method: 'GET', path: '/v1/pets', query: { limit: ['5', '6'] }, headers }],
  ['listPets, unknown parameter', { method: 'GET', path: '/v1/pets', query: { color: 'red' }, headers }],
  ['listPets, a parameter named __proto__', { method: 'GET', path: '/v1/pets', query: JSON.parse('{"__proto__":"1"}'), headers }],
  ['listPets, trailing slash', { method: 'get', path: '/v1/pets/', query: { limit: '3' }, headers }],
  ['getPet', { method: 'GET', path: '/v1/pets/12345', query: {}, headers }],
  ['getPet, not a number', { method: 'GET', path: '/v1/pets/abc', query: {}, headers }],
  ['getPet, encoded', { method: 'GET', path: '/v1/pets/%31%32', query: {}, headers }],
  ['createPet', { method: 'POST', path: '/v1/pets', query: {}, headers, body: { name: 'Rex', categoryId: 3 } }],
  ['createPet, invalid', { method: 'POST', path: '/v1/pets', query: {}, headers, body: { name: '', categoryId: 'x', extra: true } }],
  ['createPet, no body', { method: 'POST', path: '/v1/pets', query: {}, headers }],
  ['createPet, body as text', { method: 'POST', path: '/v1/pets', query: {}, headers, body: '{"name":' }],
  ['createPet, Idempotency-Key', { method: 'POST', path: '/v1/pets', query: {}, headers: { ...headers, 'idempotency-key': 'k-1' }, body: { name: 'Rex', categoryId: 3 } }],
];

describe('precompiled routing and validation give the library\'s results', () => {
  test.each(requests)('%s', (_what, request) => {
    const route = (api: OpenAPIBackend) => api.router.matchOperation(structuredClone(request) as never)?.operationId;
    expect(route(ours)).toEqual(route(library));
    const op = library.router.matchOperation(structuredClone(request) as never);
    if (!op) return;
    const validate = (api: OpenAPIBackend) => {
      const r = api.validator.validateRequest(structuredClone(request) as never, op.operationId as string);
      const coerced = r.coerced as { query?: object; params?: object };
      return { valid: r.valid, errors: r.errors, query: { ...coerced.query }, params: { ...coerced.params } };
    };
    expect(validate(ours)).toEqual(validate(library));
    const parse = (api: OpenAPIBackend) => {
      const p = api.router.parseRequest(structuredClone(request) as never, op);
      return { params: p.params, query: { ...p.query }, requestBody: p.requestBody, method: p.method, path: p.path };
    };
    expect(parse(ours)).toEqual(parse(library));
  });
});
