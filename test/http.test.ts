import { type AddressInfo, type Socket, createConnection, createServer } from 'node:net';
import { createApp } from '../src/app';
import { connect } from '../src/store/db';
import { QUERY_DEADLINE_MS } from '../src/store/deadline';
import { loadSpec } from '../src/contract/spec';
import { withStores } from '../src/handlers';
import { createStores } from '../src/store';
import { ContractChecker } from '../src/contract/responses';
import {
  API_KEY,
  OTHER_API_KEY,
  type TestApp,
  auth,
  buildNewPet,
  captureLogs,
  contractClient,
  listenOnLoopback,
  startTestApp,
} from './support/harness';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

describe('authentication (bearer API keys)', () => {
  const operations = [
    ['listPets', 'get', '/v1/pets'],
    ['createPet', 'post', '/v1/pets'],
    ['getPet', 'get', '/v1/pets/1'],
    ['an unknown path under /v1', 'get', '/v1/nothing'],
    ['a method the path does not allow', 'delete', '/v1/pets'],
    ['broken percent-encoding', 'get', '/v1/pets/%E0%A4%A'],
  ] as const;

  describe.each(operations)('%s', (_name, method, path) => {
    test.each([
      ['no Authorization header', undefined, 'Missing API key', 'Bearer realm="animal-store"'],
      ['an empty header', '', 'Missing API key', 'Bearer realm="animal-store"'],
      ['an unknown key', 'Bearer not-a-valid-key-123456', 'Invalid API key', 'Bearer realm="animal-store", error="invalid_token"'],
      [
        'a key for another scheme',
        `Basic ${API_KEY}`,
        'Malformed Authorization header',
        'Bearer realm="animal-store", error="invalid_token"',
      ],
      ['the scheme without a key', 'Bearer', 'Malformed Authorization header', 'Bearer realm="animal-store", error="invalid_token"'],
      ['the key without a scheme', API_KEY, 'Malformed Authorization header', 'Bearer realm="animal-store", error="invalid_token"'],
      [
        'a key with a space in it',
        `Bearer ${API_KEY} x`,
        'Malformed Authorization header',
        'Bearer realm="animal-store", error="invalid_token"',
      ],
      [
        'a key with characters outside the token grammar',
        'Bearer abc"def',
        'Malformed Authorization header',
        'Bearer realm="animal-store", error="invalid_token"',
      ],
      [
        'a prefix of a valid key',
        `Bearer ${API_KEY.slice(0, -1)}`,
        'Invalid API key',
        'Bearer realm="animal-store", error="invalid_token"',
      ],
      [
        'a valid key with one more character',
        `Bearer ${API_KEY}x`,
        'Invalid API key',
        'Bearer realm="animal-store", error="invalid_token"',
      ],
    ])('when the request has %s, then 401 with a Bearer challenge', async (_what, header, message, challenge) => {
      const req = t.api[method](path);
      if (header !== undefined) req.set('Authorization', header);
      const res = await req.expect(401);
      expect(res.body).toEqual({ code: 'unauthorized', message: expect.stringContaining(message), status: 401 });
      expect(res.headers['www-authenticate']).toBe(challenge);
    });
  });

  test.each([['Bearer'], ['bearer'], ['BEARER'], ['bEaReR']])(
    'when the scheme word is written %s, then the key is accepted',
    async (scheme) => {
      await t.api.get('/v1/pets').set('Authorization', `${scheme} ${API_KEY}`).expect(200);
    },
  );

  test('when any of the configured keys is sent, then it is accepted', async () => {
    await t.api.get('/v1/pets').set(auth(OTHER_API_KEY)).expect(200);
  });

  test('when two Authorization headers are sent, then 401, even if one is valid', async () => {
    const server = await listenOnLoopback(t.app);
    try {
      const { port } = server;
      // Written by hand: HTTP clients merge or refuse repeated Authorization headers.
      const raw = await new Promise<string>((resolve, reject) => {
        const socket = createConnection({ host: '127.0.0.1', port }, () => {
          socket.end(
            `GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${API_KEY}\r\nAuthorization: Bearer other\r\nConnection: close\r\n\r\n`,
          );
        });
        let text = '';
        socket
          .on('data', (c: Buffer) => (text += c.toString()))
          .on('end', () => resolve(text))
          .on('error', reject);
      });
      const res = { status: Number(raw.split(' ')[1]), body: raw.slice(raw.indexOf('\r\n\r\n') + 4) };
      expect(res.status).toBe(401);
      expect(JSON.parse(res.body)).toEqual({ code: 'unauthorized', message: expect.stringContaining('Malformed'), status: 401 });
    } finally {
      await server.close();
    }
  });
});

describe('routing', () => {
  test('when the path is unknown under /v1, then 404 names it', async () => {
    const res = await t.api.get('/v1/animals').set(auth()).expect(404);
    expect(res.body).toEqual({ code: 'not_found', message: 'No route GET /v1/animals', status: 404 });
  });

  test('when the path is outside /v1, then 404 Error body', async () => {
    const res = await t.api.get('/pets').expect(404);
    expect(res.body).toEqual({ code: 'not_found', message: 'No route GET /pets', status: 404 });
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

describe('faults', () => {
  test('when the database raises an unexpected error, then 500 with a generic message, and the details are logged', async () => {
    await t.sql`ALTER TABLE pets RENAME TO pets_moved`;
    try {
      const res = await t.api.get('/v1/pets').set(auth()).expect(500);
      expect(res.body).toEqual({ code: 'internal_error', message: 'An unexpected error occurred', status: 500 });
      expect(res.text).not.toMatch(/pets|relation|select|postgres/i);
      const line = t.logs().find((l) => l.res?.statusCode === 500);
      expect(line).toMatchObject({
        level: 50,
        msg: 'request failed',
        req: { method: 'GET', path: '/v1/pets' },
        operationId: 'listPets',
        err: { code: '42P01', stack: expect.stringContaining('relation "pets" does not exist') },
      });
    } finally {
      await t.sql`ALTER TABLE pets_moved RENAME TO pets`;
    }
  });

  describe('when the database is unreachable, then 503 with Retry-After, quickly', () => {
    // Port 1 on loopback: nothing listens, so every connection is refused.
    const sql = connect('postgres://postgres@127.0.0.1:1/none', { max: 2 });
    let api: ReturnType<typeof contractClient>;
    const logs = captureLogs('info');
    beforeAll(async () => {
      const spec = await loadSpec();
      const app = await createApp({
        spec,
        apiKeys: [API_KEY],
        handlers: withStores(createStores(sql, { idempotencyTtlSeconds: 86_400 })),
        logging: logs.logging,
      });
      api = contractClient(app, await ContractChecker.create(spec));
    });
    afterAll(() => sql.end());

    test.each([
      ['listPets', 'get', '/v1/pets'],
      ['getPet', 'get', '/v1/pets/1'],
      ['createPet', 'post', '/v1/pets'],
    ] as const)('when the database is unreachable and %s is called, then 503 with Retry-After, quickly', async (_name, method, path) => {
      const started = Date.now();
      const req = api[method](path).set(auth());
      const res = await (method === 'post' ? req.send(buildNewPet()) : req).expect(503);
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(res.body).toEqual({ code: 'service_unavailable', message: expect.any(String), status: 503 });
      expect(res.headers['retry-after']).toBe('1');
    });

    test('when the database is unreachable, then the 503 is logged as a warning with its cause', async () => {
      const res = await api.get('/v1/pets').set(auth()).set('X-Request-Id', 'unreachable-1').expect(503);
      expect(res.headers['x-request-id']).toBe('unreachable-1');
      const line = logs.lines.map((l) => JSON.parse(l)).find((l) => l.req?.id === 'unreachable-1');
      expect(line).toMatchObject({ level: 40, msg: 'request completed', res: { statusCode: 503 }, err: { code: 'ECONNREFUSED' } });
    });

    test('when the database is unreachable and the input is bad, then it is still answered 400', async () => {
      await api.get('/v1/pets?limit=0').set(auth()).expect(400);
    });
  });

  test('when the database accepts connections but never answers, then 503 once the deadline passes, not a hang', async () => {
    // A loopback peer that takes the connection and says nothing, as a frozen server does. The
    // deadline is injected (1 s) so the test does not wait the production 5 s; test/faults.test.ts
    // freezes a real PostgreSQL under the real process and its default QUERY_DEADLINE_MS.
    const deadlineMs = 1_000;
    expect(deadlineMs).toBeLessThan(QUERY_DEADLINE_MS);
    const sockets: Socket[] = [];
    const silent = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    const sql = connect(`postgres://postgres@127.0.0.1:${port}/none`, { max: 1 });
    try {
      const spec = await loadSpec();
      const app = await createApp({
        spec,
        apiKeys: [API_KEY],
        handlers: withStores(createStores(sql, { idempotencyTtlSeconds: 86_400 })),
        logging: captureLogs('silent').logging,
        deadlineMs,
      });
      const api = contractClient(app, await ContractChecker.create(spec));
      const started = Date.now();
      const res = await api.get('/v1/pets').set(auth()).expect(503);
      expect(Date.now() - started).toBeGreaterThanOrEqual(deadlineMs - 100);
      expect(Date.now() - started).toBeLessThan(deadlineMs + 2_000);
      expect(res.headers['retry-after']).toBe('1');
    } finally {
      await sql.end({ timeout: 0 });
      sockets.forEach((s) => s.destroy());
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});
