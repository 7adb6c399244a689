import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createHttpServer } from '../../../src/http/server';
import { type TestApp, auth, badRequest, buildNewPet, startTestApp } from '../../support/harness';
import { rawHttp } from '../../support/rawHttp';

// Protection against slow or oversized clients, through the server production runs
// (src/http/server.ts), with timeouts made short for the test.
let t: TestApp;
let server: Server;
let port: number;
const TIMEOUTS = { headersTimeoutMs: 400, requestTimeoutMs: 800, keepAliveTimeoutMs: 65_000 };

beforeAll(async () => {
  t = await startTestApp();
  server = createHttpServer(t.app, TIMEOUTS);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await t.close();
});

/** Sends `parts` over a raw socket, `gapMs` apart, and reads until the server closes. */
const raw = (parts: string[], gapMs = 0) => rawHttp(port, parts, { gapMs });

describe('slow and oversized clients', () => {
  test('when the headers arrive too slowly, then 408 with the Error body and the connection is closed', async () => {
    const res = await raw(
      ['GET /v1/pets HTTP/1.1\r\n', 'Host: x\r\n', 'X-Slow: 1\r\n', 'X-Slow: 2\r\n', 'X-Slow: 3\r\n', 'X-Slow: 4\r\n', '\r\n'],
      200,
    );
    expect(res.status).toBe(408);
    expect(JSON.parse(res.body)).toEqual({ code: 'request_timeout', message: 'The request was not received in time', status: 408 });
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.closedAfterMs).toBeLessThan(TIMEOUTS.headersTimeoutMs + 1_000);
  });

  test('when the body arrives too slowly, then 408 and nothing is stored', async () => {
    const body = JSON.stringify(buildNewPet({ name: 'Slow body' }));
    const chunks = body.match(/.{1,4}/g) ?? [];
    const head = `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: ${auth().Authorization}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
    const res = await raw([head, ...chunks], 150);
    expect(res.status).toBe(408);
    expect(JSON.parse(res.body).code).toBe('request_timeout');
    expect(res.closedAfterMs).toBeLessThan(TIMEOUTS.requestTimeoutMs + 1_000);
    expect(await t.sql`SELECT 1 FROM pets WHERE name = 'Slow body'`).toHaveLength(0);
  });

  test('when the headers are larger than 16 KiB, then 431 with the Error body', async () => {
    const res = await raw([`GET /v1/pets HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(17 * 1024)}\r\n\r\n`]);
    expect(res.status).toBe(431);
    expect(JSON.parse(res.body)).toEqual({
      code: 'header_fields_too_large',
      message: 'The request headers are larger than 16 KiB',
      status: 431,
    });
  });

  test('when the request is not HTTP, then 400 with the Error body', async () => {
    const res = await raw(['HELLO there\r\n\r\n']);
    expect(res.status).toBe(400);
    const message = 'The request is not valid HTTP/1.1';
    expect(JSON.parse(res.body)).toEqual(badRequest('bad_request', message, [['request', '', 'http']], [message]));
  });

  test('when a create is followed on its connection by a request that is not HTTP, then the create is answered first, the 400 after it', async () => {
    // Both in one packet: Node's parser refuses the second while the create is still being answered.
    const body = JSON.stringify(buildNewPet({ name: 'Pipelined before junk' }));
    const create = `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: ${auth().Authorization}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    const res = await raw([`${create}HELLO there\r\n\r\n`]);
    const stored = await t.sql<{ id: number }[]>`SELECT id FROM pets WHERE name = 'Pipelined before junk'`;
    expect(stored).toHaveLength(1);
    expect(res.status).toBe(201);
    const [created, refused] = res.text.split(/(?=HTTP\/1\.1 )/);
    expect(JSON.parse(created?.slice(created.indexOf('\r\n\r\n') + 4) ?? '')).toMatchObject({ id: stored[0]?.id });
    expect(refused).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(refused?.slice(refused.indexOf('\r\n\r\n') + 4) ?? '')).toMatchObject({ code: 'bad_request', status: 400 });
    expect(res.closedAfterMs).toBeDefined();
  });

  test("when a connection is idle, then it is kept longer than a load balancer's 60 s idle timeout", () => {
    expect(server.keepAliveTimeout).toBe(65_000);
    expect(server.headersTimeout).toBe(TIMEOUTS.headersTimeoutMs);
    expect(server.requestTimeout).toBe(TIMEOUTS.requestTimeoutMs);
  });

  test('when a client keeps its connection open, then it gets several answers on it', async () => {
    const request = `GET /v1/pets?limit=1 HTTP/1.1\r\nHost: x\r\nAuthorization: ${auth().Authorization}\r\n\r\n`;
    const res = await raw([request, request, `GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`], 50);
    expect(res.status).toBe(200);
    expect(res.body.match(/HTTP\/1\.1 200 OK/g)).toHaveLength(2);
  });
});
