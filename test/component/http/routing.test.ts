import { API_KEY, auth, listenOnLoopback, testAppForFile } from '../../support/harness';
import { rawHttp } from '../../support/rawHttp';

const t = testAppForFile();

describe('routing', () => {
  test('when the path is unknown under /v1, then 404 names it', async () => {
    const res = await t.api.get('/v1/animals').set(auth()).expect(404);
    expect(res.body).toEqual({ code: 'not_found', message: 'No route GET /v1/animals', status: 404 });
  });

  test('when the path is outside /v1, then 404 Error body', async () => {
    const res = await t.api.get('/pets').expect(404);
    expect(res.body).toEqual({ code: 'not_found', message: 'No route GET /pets', status: 404 });
  });

  test('when the request-target is in absolute form (RFC 9112 §3.2.2), then it is answered as its path and query', async () => {
    const at = await listenOnLoopback(t.app);
    try {
      const head = `Host: 127.0.0.1:${at.port}\r\nAuthorization: Bearer ${API_KEY}\r\nConnection: close\r\n\r\n`;
      const res = await rawHttp(at.port, [`GET http://127.0.0.1:${at.port}/v1/pets?limit=1 HTTP/1.1\r\n${head}`]);
      expect(res.status).toBe(200);
      expect(JSON.parse(res.body)).toEqual(expect.any(Array));
      const refused = await rawHttp(at.port, [`GET http://127.0.0.1:${at.port}/v1/pets?limit=0 HTTP/1.1\r\n${head}`]);
      expect(JSON.parse(refused.body)).toMatchObject({ code: 'validation_failed', errors: [{ in: 'query', name: 'limit' }] });
    } finally {
      await at.close();
    }
  });

  test("when a path differs from the spec's only in case, then it is not found", async () => {
    await t.api.get('/V1/pets').set(auth()).expect(404);
    await t.api.get('/v1/Pets').set(auth()).expect(404);
  });

  test.each([
    ['delete', '/v1/pets', 'GET, HEAD, POST, OPTIONS'],
    ['put', '/v1/pets', 'GET, HEAD, POST, OPTIONS'],
    ['patch', '/v1/pets/1', 'GET, HEAD, OPTIONS'],
    ['post', '/v1/pets/1', 'GET, HEAD, OPTIONS'],
  ] as const)('when %s %s is asked, then 405 with Allow: %s', async (method, path, allow) => {
    const res = await t.api[method](path).set(auth()).expect(405);
    expect(res.headers.allow).toBe(allow);
    expect(res.body).toEqual({
      code: 'method_not_allowed',
      message: `${method.toUpperCase()} is not allowed here; allowed: ${allow}`,
      status: 405,
    });
  });

  test('when listPets is asked with HEAD, then 200 with headers and no body', async () => {
    const res = await t.api.head('/v1/pets').set(auth()).expect(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.text).toBeUndefined();
  });

  test('when any response is sent, then it does not name the framework', async () => {
    const res = await t.api.get('/v1/pets').set(auth()).expect(200);
    expect(res.headers['x-powered-by']).toBeUndefined();
  });
});

describe('OPTIONS', () => {
  test.each([
    ['/v1/pets', 'GET, HEAD, POST, OPTIONS'],
    ['/v1/pets/1', 'GET, HEAD, OPTIONS'],
    ['/healthz', 'GET, HEAD, OPTIONS'],
  ])('when OPTIONS %s is sent, key or not, then 204 with Allow: %s', async (path, allow) => {
    for (const withKey of [false, true]) {
      const req = t.api.options(path);
      if (withKey) req.set(auth());
      const res = await req.expect(204);
      expect(res.headers.allow).toBe(allow);
      expect(res.text).toBe('');
    }
  });

  test('when OPTIONS is sent to a path that does not exist, then 404 with a key, 401 without', async () => {
    await t.api.options('/v1/nowhere').set(auth()).expect(404);
    await t.api.options('/v1/nowhere').expect(401);
  });
});
