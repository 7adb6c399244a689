import { auth, buildNewPet, testAppForFile } from '../../support/harness';

// What every answer carries, whoever answers it: the request core, a probe, or the routes outside the contract
// (through CORS too: cors.test.ts).
const t = testAppForFile();
const REQUEST_ID = /^[0-9a-f-]{36}$/;

describe('security headers for a JSON API', () => {
  test.each([
    ['a create', () => t.api.post('/v1/pets').set(auth()).send(buildNewPet()), 201],
    ['a 400', () => t.api.get('/v1/pets?limit=0').set(auth()), 400],
    ['a 401', () => t.api.get('/v1/pets'), 401],
    ['a 404', () => t.api.get('/v1/pets/999999').set(auth()), 404],
    ['a probe', () => t.api.get('/readyz'), 200],
    ['a 405', () => t.api.delete('/v1/pets').set(auth()), 405],
  ])(
    'when %s is answered, then it carries nosniff and Cache-Control: no-store, and does not name the framework',
    async (_what, call, status) => {
      const res = await call().expect(status);
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['x-request-id']).toMatch(REQUEST_ID);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['x-powered-by']).toBeUndefined();
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    },
  );

  test.each([
    ['a page', () => Promise.resolve('/v1/pets')],
    ['an animal', async () => `/v1/pets/${(await t.api.post('/v1/pets').set(auth()).send(buildNewPet())).body.id}`],
  ])(
    'when %s is read (a conditional read: ETag), then it carries nosniff and Cache-Control: private, no-cache (revalidated, never in a shared cache)',
    async (_what, path) => {
      const res = await t.api
        .get(await path())
        .set(auth())
        .expect(200);
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['cache-control']).toBe('private, no-cache');
      expect(res.headers.etag).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
      expect(res.headers['x-powered-by']).toBeUndefined();
    },
  );

  test.each([
    ['the contract is fetched (express)', () => t.api.get('/openapi.json'), 200],
    ['a path nobody serves is asked for (express)', () => t.api.get('/nothing-here'), 404],
    ['a request with an invalid Host is refused', () => t.api.get('/v1/pets').set('Host', 'bad host'), 400],
  ])('when %s, then the answer carries nosniff and a request id too', async (_what, call, status) => {
    const res = await call().expect(status);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['x-request-id']).toMatch(REQUEST_ID);
  });
});
