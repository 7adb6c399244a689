import { resolve } from '../../../src/contract/spec';
import supertest from 'supertest';
import { parse } from 'yaml';
import { referencePageDocument } from '../../../src/http/docsAndMetrics';
import { type TestApp, auth, buildNewPet, startTestApp, specOfFile } from '../../support/harness';

// CORS_ORIGINS, as a browser's requests carry it: an Origin header, and preflights before
// requests that are not "simple" (an Authorization header makes every API call one).
const APP = 'https://app.example.com';
const EXPOSED =
  'RateLimit,RateLimit-Policy,Retry-After,Deprecation,Sunset,Link,ETag,Idempotent-Replayed,X-Request-Id,WWW-Authenticate,API-Key-Expiration,Accept-Encoding';
const preflight = (t: TestApp, origin: string, method = 'POST') =>
  t.api
    .options('/v1/pets')
    .set('Origin', origin)
    .set('Access-Control-Request-Method', method)
    .set('Access-Control-Request-Headers', 'authorization,content-type,idempotency-key');
const corsHeaders = (headers: Record<string, string>) => Object.keys(headers).filter((h) => h.startsWith('access-control-'));

describe('CORS_ORIGINS unset (the default)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ database: 'file' });
  });
  afterAll(() => t.close());

  test('when a browser sends an Origin, then no response carries a CORS header, and a preflight gets the plain OPTIONS answer', async () => {
    expect(corsHeaders((await t.api.get('/v1/pets').set(auth()).set('Origin', APP).expect(200)).headers)).toEqual([]);
    const res = await preflight(t, APP).expect(204);
    expect(res.headers.allow).toBe('GET, HEAD, POST, OPTIONS');
    expect(corsHeaders(res.headers)).toEqual([]);
  });
});

describe('CORS_ORIGINS=https://app.example.com,http://localhost:5173', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ corsOrigins: [APP, 'http://localhost:5173'], database: 'file' });
  });
  afterAll(() => t.close());

  test('when a listed origin sends a preflight, then it is answered without a key: the methods and the four request headers (If-None-Match for conditional reads)', async () => {
    const res = await preflight(t, APP).expect(204);
    expect(res.headers).toMatchObject({
      'access-control-allow-origin': APP,
      'access-control-allow-methods': 'GET,HEAD,POST,DELETE,OPTIONS',
      'access-control-allow-headers': 'Authorization,Content-Type,Idempotency-Key,If-None-Match',
      'access-control-max-age': '600',
      vary: expect.stringContaining('Origin'),
    });
  });

  test('when CORS answers a preflight itself or lets a request go on to the core, then both answers carry nosniff and a request id', async () => {
    const answers = [await preflight(t, APP).expect(204), await t.api.get('/v1/pets').set(auth()).set('Origin', APP).expect(200)];
    for (const res of answers) {
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    }
    expect(answers[1]?.headers['access-control-allow-origin']).toBe(APP);
  });

  test.each([
    ['a list', (t: TestApp) => t.api.get('/v1/pets').set(auth()), 200],
    ['a create', (t: TestApp) => t.api.post('/v1/pets').set(auth()).send(buildNewPet()), 201],
    ['a request without a key (its 401 and challenge readable by the script)', (t: TestApp) => t.api.get('/v1/pets'), 401],
    ['the deprecated getPet (its Deprecation and Sunset readable)', (t: TestApp) => t.api.get('/v1/pets/999999'), 404],
  ])("when %s comes from a listed origin, then it is allowed and the contract's headers are exposed", async (_name, request, status) => {
    const req = request(t).set('Origin', 'http://localhost:5173');
    const res = await (status === 404 ? req.set(auth()) : req).expect(status);
    expect(res.headers['access-control-allow-origin']).toBe('http://localhost:5173');
    expect(res.headers['access-control-expose-headers']).toBe(EXPOSED);
  });

  test('when an origin is not listed, then it gets no CORS headers, on requests and preflights alike', async () => {
    for (const origin of ['https://evil.example', 'https://app.example.com.evil.example', 'http://app.example.com', 'null']) {
      expect(corsHeaders((await t.api.get('/v1/pets').set(auth()).set('Origin', origin).expect(200)).headers)).toEqual([]);
      const res = await preflight(t, origin).expect(204);
      expect(res.headers.allow).toBe('GET, HEAD, POST, OPTIONS');
      expect(corsHeaders(res.headers)).toEqual([]);
    }
  });
});

describe('CORS_ORIGINS=*', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ corsOrigins: '*', database: 'file' });
  });
  afterAll(() => t.close());

  test('when any origin calls, then it is allowed, with the same headers exposed', async () => {
    const res = await t.api.get('/v1/pets').set(auth()).set('Origin', 'https://anywhere.example').expect(200);
    expect(res.headers).toMatchObject({ 'access-control-allow-origin': '*', 'access-control-expose-headers': EXPOSED });
    expect((await preflight(t, 'https://anywhere.example').expect(204)).headers['access-control-allow-origin']).toBe('*');
  });
});

describe('the reference page and its paths', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ database: 'file' });
  });
  afterAll(() => t.close());

  test("when the reference page's document is built, then it lists this server first, relative to the page (/v1, and / for the probes), then the spec's public ones", () => {
    const page = referencePageDocument(t.spec) as any;
    const doc = t.spec.publicDocument as any;
    expect(JSON.stringify(page)).not.toContain('"x-internal":true');
    expect(page.servers).toEqual([{ url: '/v1', description: 'This server (the origin this page was loaded from)' }, ...doc.servers]);
    expect(page.paths['/healthz'].servers).toEqual([
      { url: '/', description: 'This server (the origin this page was loaded from)' },
      ...doc.paths['/healthz'].servers,
    ]);
    expect(page.paths['/pets'].servers).toBeUndefined();
  });

  test('when the contract is fetched, then it is the spec as published (its internal servers left out)', async () => {
    expect((await supertest(t.app).get('/openapi.yaml').expect(200)).text).toBe(t.spec.publicYamlText);
    expect(parse(t.spec.publicYamlText).servers).toEqual((t.spec.publicDocument as any).servers);
  });

  test.each([
    '/docs/%2e%2e/%2e%2e/package.json',
    '/docs/package.json',
    '/docs/no-such-file.js',
    '/docs/%2e%2e/src/main.ts',
    '/docs/..%2f..%2fpackage.json',
  ])('when GET %s is asked for, then it is a 404 Error body', async (url) => {
    const res = await supertest(t.app).get(url);
    expect([url, res.status, res.headers['content-type'], res.body]).toEqual([
      url,
      404,
      'application/json; charset=utf-8',
      { code: 'not_found', message: expect.any(String), status: 404 },
    ]);
  });

  test('when /docs is asked for, then it redirects to /docs/, the page', async () => {
    expect((await supertest(t.app).get('/docs').expect(301)).headers.location).toBe('/docs/');
    expect((await supertest(t.app).get('/docs/').expect(200)).headers['content-type']).toMatch(/^text\/html/);
  });
});

describe('what CORS exposes follows the spec', () => {
  test('when the spec documents a response header, then a script on a listed origin may read it (X-Request-Id too)', async () => {
    const spec = await specOfFile();
    const documented = new Set<string>();
    for (const item of Object.values(spec.document.paths ?? {}))
      for (const op of Object.values(item ?? {}) as { responses?: Record<string, unknown> }[])
        for (const response of Object.values(op?.responses ?? {}))
          for (const name of Object.keys(resolve<{ headers?: object }>(spec.document, response as { headers?: object }).headers ?? {}))
            documented.add(name);
    documented.delete('Access-Control-Allow-Origin');
    // A CORS-safelisted response header (Fetch: Cache-Control among them) is readable without being exposed.
    documented.delete('Cache-Control');
    expect([...documented].sort()).toEqual(
      EXPOSED.split(',')
        .filter((h) => h !== 'X-Request-Id')
        .sort(),
    );
  });
});
