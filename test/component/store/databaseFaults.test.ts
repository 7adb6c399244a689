import { type AddressInfo, type Socket, createServer } from 'node:net';
import { createApp } from '../../../src/app';
import { connect } from '../../../src/store/database/db';
import { QUERY_DEADLINE_MS } from '../../../src/store/database/deadline';
import { withStores } from '../../../src/handlers';
import { createStores } from '../../../src/store';
import { API_KEY, auth, buildNewPet, captureLogs, contractClient, testAppForFile, specOfFile, checkerOfFile } from '../../support/harness';

const t = testAppForFile();

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
      const spec = await specOfFile();
      const app = await createApp({
        spec,
        bootstrapKeys: [API_KEY],
        handlers: withStores(createStores(sql, { idempotencyTtlSeconds: 86_400 })),
        logging: logs.logging,
      });
      api = contractClient(app, await checkerOfFile());
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
    // deadline is injected (1 s) so the test does not wait the production 5 s; test/system/process/faults.test.ts
    // freezes a real PostgreSQL under the real process and its default QUERY_DEADLINE_MS.
    const deadlineMs = 1_000;
    expect(deadlineMs).toBeLessThan(QUERY_DEADLINE_MS);
    const sockets: Socket[] = [];
    const silent = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    const sql = connect(`postgres://postgres@127.0.0.1:${port}/none`, { max: 1 });
    try {
      const spec = await specOfFile();
      const app = await createApp({
        spec,
        bootstrapKeys: [API_KEY],
        handlers: withStores(createStores(sql, { idempotencyTtlSeconds: 86_400 })),
        logging: captureLogs('silent').logging,
        deadlineMs,
      });
      const api = contractClient(app, await checkerOfFile());
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
