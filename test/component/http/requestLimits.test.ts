import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import type { ContractChecker } from '../../../src/contract/contractChecker';
import { BODY_LIMIT_BYTES, BODY_MAX_DEPTH } from '../../../src/http/body';
import { API_KEY, type TestApp, auth, badRequest, buildNewPet, listenOnLoopback, startTestApp, checkerOfFile } from '../../support/harness';
import { rawHttp } from '../../support/rawHttp';

// What a careless or hostile client sends in a body: nesting deeper than any pet, compressed
// bodies the contract does not name, bodies larger than the limit, declared or chunked. Each is
// a 4xx Error body, answered without reading what is beyond the limit.
let t: TestApp;
let server: Awaited<ReturnType<typeof listenOnLoopback>>;
let checker: ContractChecker;
beforeAll(async () => {
  t = await startTestApp();
  server = await listenOnLoopback(t.app);
  checker = await checkerOfFile();
});
afterAll(async () => {
  await server.close();
  await t.close();
});

const nested = (depth: number) => `${'['.repeat(depth - 1)}1${']'.repeat(depth - 1)}`;
const withExtra = (extra: string) => `{"name":"Deep","categoryId":1,"extra":${extra}}`;

describe('request bodies nested deeper than a pet', () => {
  test.each([4_500, 8_000, BODY_MAX_DEPTH + 1])('when a body nests %i levels deep, then 400 names the limit', async (depth) => {
    const text = withExtra(nested(depth));
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(BODY_LIMIT_BYTES);
    const res = await t.api.post('/v1/pets').set(auth()).set('Content-Type', 'application/json').send(text).expect(400);
    const message = `The request body nests objects and arrays more than ${BODY_MAX_DEPTH} levels deep`;
    expect(res.body).toEqual(badRequest('validation_failed', message, [['body', '', 'maxDepth']], [message]));
  });

  test('when a body nests objects exactly as deep as the limit, then it is accepted (what is unknown in it is ignored)', async () => {
    const text = withExtra(`${'{"a":'.repeat(BODY_MAX_DEPTH - 1)}1${'}'.repeat(BODY_MAX_DEPTH - 1)}`);
    await t.api.post('/v1/pets').set(auth()).set('Content-Type', 'application/json').send(text).expect(201);
  });
});

describe('content codings: the contract names none', () => {
  const pet = Buffer.from(JSON.stringify(buildNewPet({ name: 'Compressed' })));
  test.each([
    ['gzip', gzipSync(pet)],
    ['deflate', deflateSync(pet)],
    ['br', brotliCompressSync(pet)],
    ['gzip', Buffer.from('not gzip at all')],
    ['x-unknown', pet],
    ['gzip, identity', gzipSync(pet)],
  ])(
    'when the body comes with Content-Encoding: %s, then 415 with Accept-Encoding: identity, and nothing is stored',
    async (coding, body) => {
      // The bytes as they are (supertest would serialise a Buffer as JSON), the response checked against the spec.
      const res = await fetch(`${server.origin}/v1/pets`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${API_KEY}`, 'Content-Type': 'application/json', 'Content-Encoding': coding },
        body,
      });
      const received = { status: res.status, headers: Object.fromEntries(res.headers), body: await res.json() };
      checker.check('post', '/v1/pets', received);
      expect(received.status).toBe(415);
      expect(received.body).toEqual({ code: 'unsupported_media_type', message: expect.stringContaining('Content-Encoding'), status: 415 });
      expect(received.headers['accept-encoding']).toBe('identity');
      expect(await t.sql`SELECT 1 FROM pets WHERE name = 'Compressed'`).toHaveLength(0);
    },
  );

  test('when the body comes with Content-Encoding: identity, then it is read as it is', async () => {
    await t.api
      .post('/v1/pets')
      .set(auth())
      .set('Content-Type', 'application/json')
      .set('Content-Encoding', 'identity')
      .send(pet.toString())
      .expect(201);
  });
});

const statusOf = (response: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(response)?.[1]);
const bodyOf = (response: string) => JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;

describe('bodies larger than the limit are refused before they are read', () => {
  test('when Content-Length declares 10 MB and the client sends slowly, then 413 comes at once and the connection is closed', async () => {
    const { text: response, closedAfterMs } = await rawHttp(
      server.port,
      [
        `POST /v1/pets HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${API_KEY}\r\nContent-Type: application/json\r\nContent-Length: 10000000\r\n\r\n`,
        '{"name":"slow',
      ],
      { waitMs: 3_000 },
    );
    expect(statusOf(response)).toBe(413);
    expect(bodyOf(response)).toEqual({
      code: 'payload_too_large',
      message: `The request body exceeds ${BODY_LIMIT_BYTES} bytes`,
      status: 413,
    });
    expect(response).toMatch(/\r\nConnection: close\r\n/i);
    expect(closedAfterMs).toBeLessThan(1_000);
  });

  test('when a chunked body passes the limit, then 413 comes as it passes and the connection is closed, however much more the client would send', async () => {
    const chunk = 'x'.repeat(4096);
    const { text: response, closedAfterMs } = await rawHttp(
      server.port,
      [
        `POST /v1/pets HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${API_KEY}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
        // Five chunks of 4 KiB, and never the last chunk.
        ...Array.from({ length: 5 }, () => `${chunk.length.toString(16)}\r\n${chunk}\r\n`),
      ],
      { waitMs: 3_000 },
    );
    expect(statusOf(response)).toBe(413);
    expect(response).toMatch(/\r\nConnection: close\r\n/i);
    expect(closedAfterMs).toBeLessThan(1_000);
  });

  test('when a request is refused before its large body is read (no key), then the connection is closed after the 401', async () => {
    const { text: response, closedAfterMs } = await rawHttp(
      server.port,
      ['POST /v1/pets HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 10000000\r\n\r\n', '{'],
      { waitMs: 3_000 },
    );
    expect(statusOf(response)).toBe(401);
    expect(response).toMatch(/\r\nConnection: close\r\n/i);
    expect(closedAfterMs).toBeLessThan(1_000);
  });

  test('when a small body is refused unread (415), then the connection stays open for the next request', async () => {
    const { text: response, closedAfterMs } = await rawHttp(
      server.port,
      [
        `POST /v1/pets HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${API_KEY}\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nhi` +
          `GET /v1/pets?limit=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${API_KEY}\r\n\r\n`,
      ],
      { waitMs: 1_000 },
    );
    expect(response.match(/HTTP\/1\.1 \d{3}/g)).toEqual(['HTTP/1.1 415', 'HTTP/1.1 200']);
    expect(closedAfterMs).toBeUndefined();
  });
});
