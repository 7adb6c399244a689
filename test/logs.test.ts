import { type TestApp, auth, buildNewPet, startTestApp } from './support/harness';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const lineFor = (requestId: string) => t.logs().find((l) => l.req?.id === requestId);

describe('request logs (pino, one JSON line per request)', () => {
  test('when a request succeeds, then its line names the request id, route, operation, status, duration and key, never the key itself', async () => {
    const res = await t.api.post('/v1/pets').set(auth()).set('X-Request-Id', 'req-create-1').send(buildNewPet()).expect(201);
    expect(res.headers['x-request-id']).toBe('req-create-1');
    const line = lineFor('req-create-1');
    expect(line).toEqual(expect.objectContaining({
      level: 30,
      msg: 'request completed',
      req: { id: 'req-create-1', method: 'POST', path: '/v1/pets' },
      res: { statusCode: 201 },
      route: '/v1/pets',
      operationId: 'createPet',
      apiKey: expect.stringMatching(/^key:[0-9a-f]{8}$/),
      responseTime: expect.any(Number),
    }));
    const all = JSON.stringify(t.logs());
    expect(all).not.toContain('test-key-0123456789abcdef');
    expect(all).not.toMatch(/authorization/i);
  });

  test('when no request id is sent, or an unusable one, then one is made and echoed', async () => {
    const made = await t.api.get('/v1/pets').set(auth()).expect(200);
    expect(made.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(lineFor(made.headers['x-request-id'])).toBeDefined();
    const refused = await t.api.get('/v1/pets').set(auth()).set('X-Request-Id', 'bad id with spaces').expect(200);
    expect(refused.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  test('the route is the template, not the URL, and a refused caller has no key identity', async () => {
    const res = await t.api.get('/v1/pets/12345').expect(401);
    expect(lineFor(res.headers['x-request-id'])).toEqual(expect.objectContaining({ route: '/v1/pets/{petId}', operationId: 'getPet', res: { statusCode: 401 } }));
    expect(lineFor(res.headers['x-request-id'])?.apiKey).toBeUndefined();
  });
});
