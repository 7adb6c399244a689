import supertest from 'supertest';
import { revokeKey } from '../../../src/store/keys/admin';
import { API_KEY, type TestApp, auth, issueKey, listenOnLoopback, startTestApp, until } from '../../support/harness';
import { rawHttp } from '../../support/rawHttp';

/*
 * The HTTP rules of /mcp, ahead of the MCP SDK: off unless enabled, DNS-rebinding protection (Host
 * and Origin), POST only, the bearer key, and the API's body rules. What the tools do: mcp.test.ts.
 */
const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'refusals', version: '1' } },
};
const MCP_ACCEPT = 'application/json, text/event-stream';

/** Runs `use` on an app of its own, closed after: one app at a time (the embedded test database serves one session at a time). */
async function withApp(options: Parameters<typeof startTestApp>[0], use: (t: TestApp) => Promise<void>): Promise<void> {
  const t = await startTestApp({ ...options, database: 'file' });
  try {
    await use(t);
  } finally {
    await t.close();
  }
}

const post = (t: TestApp, key: string | null = API_KEY) => {
  const req = supertest(t.app).post('/mcp').set('Accept', MCP_ACCEPT);
  return key === null ? req : req.set(auth(key));
};

describe('enabling', () => {
  test('when MCP is not enabled, then /mcp is an unknown path: 404 with the Error body', () =>
    withApp({}, async (t) => {
      const res = await post(t).send(INIT);
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ code: 'not_found', status: 404 });
    }));

  test('when it is enabled, then initialize answers with the server’s name, version and the tools capability', () =>
    withApp({ mcp: { loopbackOnly: true } }, async (t) => {
      const res = await post(t).send(INIT);
      expect(res.status).toBe(200);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.body.result).toMatchObject({ serverInfo: { name: 'animal-store-api', version: '1.0.0' }, capabilities: { tools: {} } });
    }));

  test('when it is enabled, then /mcp is that path exactly (its query aside): /mcp/ and /MCP are unknown paths, 404', () =>
    withApp({ mcp: { loopbackOnly: true } }, async (t) => {
      expect((await supertest(t.app).post('/mcp?x=1').set('Accept', MCP_ACCEPT).set(auth()).send(INIT)).status).toBe(200);
      for (const path of ['/mcp/', '/MCP', '/mcp/x']) {
        const res = await supertest(t.app).post(path).set('Accept', MCP_ACCEPT).set(auth()).send(INIT);
        expect([path, res.status, res.body.code]).toEqual([path, 404, 'not_found']);
      }
    }));
});

describe('DNS-rebinding protection', () => {
  test('when the service listens on loopback and the Host names another host, then 403 and nothing is read', async () => {
    await withApp({ mcp: { loopbackOnly: true } }, async (t) => {
      const res = await post(t).set('Host', 'rebound.example:3000').send(INIT);
      expect(res.status).toBe(403);
      expect(JSON.stringify(res.body)).toContain('Invalid Host');
    });
    await withApp({ mcp: { loopbackOnly: false } }, async (t) => {
      expect((await post(t).set('Host', 'api.example.com').send(INIT)).status).toBe(200);
    });
  });

  test('when the service listens on loopback and an HTTP/1.0 request names no Host, then 403 with every response’s headers', () =>
    withApp({ mcp: { loopbackOnly: true } }, async (t) => {
      const at = await listenOnLoopback(t.app);
      const body = JSON.stringify(INIT);
      const res = await rawHttp(at.port, [
        `POST /mcp HTTP/1.0\r\nAuthorization: Bearer ${API_KEY}\r\nAccept: ${MCP_ACCEPT}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      ]);
      await at.close();
      expect(res.status).toBe(403);
      expect(JSON.parse(res.body)).toEqual({ jsonrpc: '2.0', error: { code: -32000, message: 'Missing Host header' }, id: null });
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      expect(res.headers['cache-control']).toBe('no-store');
    }));

  test('when a browser’s Origin is not listed in CORS_ORIGINS, then 403, whatever the key; CORS_ORIGINS=* opens /mcp to none', async () => {
    for (const corsOrigins of [['https://app.example.com'], '*' as const])
      await withApp({ mcp: { loopbackOnly: true }, corsOrigins }, async (t) => {
        const res = await post(t).set('Origin', 'http://rebound.example:3000').send(INIT);
        expect(res.status).toBe(403);
        expect(res.body.error.message).toContain('may not call /mcp');
        expect(res.headers['access-control-allow-origin']).toBeUndefined();
      });
  });

  test('when the Origin is listed, then its preflight allows the MCP headers and its POST is answered with CORS headers', () =>
    withApp({ mcp: { loopbackOnly: true }, corsOrigins: ['https://app.example.com'] }, async (t) => {
      const preflight = await supertest(t.app)
        .options('/mcp')
        .set('Origin', 'https://app.example.com')
        .set('Access-Control-Request-Method', 'POST')
        .set('Access-Control-Request-Headers', 'authorization, content-type, mcp-protocol-version');
      expect(preflight.status).toBe(204);
      expect(preflight.headers['access-control-allow-headers']).toContain('Mcp-Protocol-Version');
      const res = await post(t).set('Origin', 'https://app.example.com').send(INIT);
      expect(res.status).toBe(200);
      expect(res.headers['access-control-allow-origin']).toBe('https://app.example.com');
    }));
});

describe('the request', () => {
  let t: TestApp;
  beforeAll(async () => {
    // Keys never go stale here: on the embedded database every worker's PGlite shares one event loop, and a stall
    // past the 1 s bound answers a managed key 503, as it should (bound and 503: apiKeys.test.ts, keyRevocation.test.ts).
    t = await startTestApp({ mcp: { loopbackOnly: true }, database: 'file', keyRegistry: { maxStaleMs: 600_000 } });
  });
  afterAll(() => t.close());

  test.each(['get', 'delete', 'put'] as const)(
    'when the method is %s, then 405 naming POST (the endpoint keeps no session)',
    async (method) => {
      const res = await supertest(t.app)[method]('/mcp').set(auth()).set('Accept', MCP_ACCEPT);
      expect(res.status).toBe(405);
      expect(res.headers.allow).toBe('POST, OPTIONS');
      expect(res.body).toMatchObject({ code: 'method_not_allowed', status: 405 });
    },
  );

  test('when no key, a malformed one or two Authorization headers are sent, then 401 with the bearer challenge', async () => {
    const none = await post(t, null).send(INIT);
    expect(none.status).toBe(401);
    expect(none.headers['www-authenticate']).toBe('Bearer realm="animal-store"');
    expect((await post(t, null).set('Authorization', 'Basic eDp5').send(INIT)).status).toBe(401);
    const at = await listenOnLoopback(t.app);
    const body = JSON.stringify(INIT);
    const doubled = await rawHttp(at.port, [
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${API_KEY}\r\nAuthorization: Bearer ${API_KEY}\r\n` +
        `Accept: ${MCP_ACCEPT}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
    ]);
    await at.close();
    expect(doubled.status).toBe(401);
    expect(JSON.parse(doubled.body).code).toBe('unauthorized');
  });

  test('when a managed key is revoked while the service runs, then /mcp refuses it as the API does', async () => {
    const issued = await issueKey(t, { scopes: ['pets:read'] });
    expect((await post(t, issued.key).send(INIT)).status).toBe(200);
    await revokeKey(t.sql, { id: issued.listing.id, actor: 'test' });
    await until(() => {
      const found = t.keys.lookup(issued.listing.id);
      return found.state === 'found' && found.key.revoked;
    });
    const res = await post(t, issued.key).send(INIT);
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toContain('The API key was revoked');
  });

  test.each([
    {
      what: 'over 16 KiB',
      type: 'application/json',
      body: JSON.stringify({ ...INIT, pad: 'x'.repeat(17_000) }),
      status: 413,
      code: 'payload_too_large',
    },
    { what: 'text/plain', type: 'text/plain', body: JSON.stringify(INIT), status: 415, code: 'unsupported_media_type' },
    { what: 'malformed JSON', type: 'application/json', body: '{"jsonrpc":', status: 400, code: 'malformed_json' },
    {
      what: 'nested 40 deep',
      type: 'application/json',
      body: `${'['.repeat(40)}${']'.repeat(40)}`,
      status: 400,
      code: 'validation_failed',
    },
    {
      what: 'JSON inside a JSON string',
      type: 'application/json',
      body: JSON.stringify(JSON.stringify(INIT)),
      status: 400,
      code: 'malformed_json',
    },
    { what: 'empty', type: 'application/json', body: '', status: 400, code: 'malformed_json' },
  ])('when the body is $what, then the API’s body rule answers $status $code', async ({ type, body, status, code }) => {
    const res = await post(t).set('Content-Type', type).send(body);
    expect(res.status).toBe(status);
    expect(res.body).toMatchObject({ code, status });
    // As on the API: a 400 names what failed, and no other status carries errors.
    expect(res.body.errors === undefined).toBe(status !== 400);
  });

  test('when a batch carries a tools/call the key’s scopes do not open, then the whole batch is refused with 403 before anything runs', async () => {
    const reader = await issueKey(t, { scopes: ['pets:read'] });
    const call = (id: number, name: string, args: object) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name, arguments: args },
    });
    const res = await post(t, reader.key).send([call(1, 'listPets', {}), call(2, 'createPet', { body: { name: 'Batch', categoryId: 1 } })]);
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'insufficient_scope', status: 403 });
    expect((await t.sql`SELECT 1 FROM pets WHERE name = 'Batch'`).length).toBe(0);
  });

  test('when the Accept header lacks text/event-stream, then the SDK answers 406 as the transport requires, with a JSON-RPC error', async () => {
    const res = await supertest(t.app).post('/mcp').set(auth()).set('Accept', 'application/json').send(INIT);
    expect(res.status).toBe(406);
    expect(res.body).toMatchObject({ jsonrpc: '2.0', error: { code: expect.any(Number) }, id: null });
  });

  test('when the message is no JSON-RPC, or names an unsupported protocol version, then the SDK answers 400 with a JSON-RPC error', async () => {
    const notRpc = await post(t).send({ hello: 'world' });
    expect(notRpc.status).toBe(400);
    expect(notRpc.body).toMatchObject({ jsonrpc: '2.0', error: { code: expect.any(Number) }, id: null });
    const version = await post(t).set('Mcp-Protocol-Version', '1900-01-01').send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    expect(version.status).toBe(400);
    expect(version.body.error.message).toContain('Unsupported protocol version');
  });
});
