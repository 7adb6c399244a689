import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { mcpTools } from '../../../generated/mcp-tools';
import { headerArgument } from '../../../src/contract/mcpTools';
import { type Loopback, loopbackAgent, requestOf, resultOf, send, unreachedResult } from '../../../src/mcp/call';

/*
 * A tool call's arguments made into the operation's request, and its answer (or its failure on
 * the way) made into the tool's result. The calls through a real server: test/component/http/mcp*.test.ts.
 */
const tool = (name: string) => {
  const found = mcpTools.find((t) => t.name === name);
  if (!found) throw new Error(name);
  return found;
};
const bodyOf = (result: CallToolResult) => JSON.parse((result.content[1] as { text: string }).text);
const made = (name: string, args: Record<string, unknown>) => {
  const r = requestOf(tool(name), args);
  if ('refused' in r) throw new Error(JSON.stringify(r.refused));
  return r.made;
};

describe('arguments into a request', () => {
  test('when a header parameter is named, then its argument is its camelCase name', () => {
    expect(['Idempotency-Key', 'If-None-Match', 'X-Request-ID'].map(headerArgument)).toEqual([
      'idempotencyKey',
      'ifNoneMatch',
      'xRequestId',
    ]);
  });

  test('when arguments of every kind are given, then each goes where the operation takes it, as text', () => {
    expect(made('listPets', { limit: 5, status: 'sold', categoryId: -3, ifNoneMatch: '"x"' })).toEqual({
      path: '/v1/pets?limit=5&status=sold&categoryId=-3',
      headers: { 'If-None-Match': '"x"' },
      body: undefined,
    });
    expect(made('getPet', { petId: '1/../2' }).path).toBe('/v1/pets/1%2F..%2F2');
    expect(made('createPet', { body: { name: 'Rex', categoryId: 1 }, idempotencyKey: 'k' })).toEqual({
      path: '/v1/pets',
      headers: { 'Idempotency-Key': 'k' },
      body: '{"name":"Rex","categoryId":1}',
    });
  });

  test('when a value is not a string or number, then it is sent as its JSON text, for validation to refuse by name', () => {
    expect(made('listPets', { limit: { $gt: 1 }, status: null }).path).toBe('/v1/pets?limit=%7B%22%24gt%22%3A1%7D&status=null');
    expect(made('listPets', { status: ['sold', 'pending'] }).path).toBe('/v1/pets?status=sold&status=pending');
  });

  test('when an argument is unknown, a path argument missing or a header value unsendable, then the call is refused naming each', () => {
    const r = requestOf(tool('getPet'), { id: 1, ifNoneMatch: 'a\r\nX-Evil: 1' });
    expect('refused' in r && bodyOf(r.refused)).toMatchObject({
      code: 'validation_failed',
      status: 400,
      errors: [
        { in: 'request', name: 'id', rule: 'additionalProperties' },
        { in: 'path', name: 'petId', rule: 'required' },
        { in: 'header', name: 'If-None-Match', rule: 'http' },
      ],
    });
  });
});

describe('an answer into a result', () => {
  test('when a page with a next link comes back, then next holds the arguments of the next page, typed as the input schema says', () => {
    const result = resultOf(tool('listPets'), {
      status: 200,
      headers: { link: '</v1/pets?limit=2&status=sold&categoryId=-4&cursor=AbC_-1>; rel="next"', etag: '"t"', 'x-other': 'no' },
      text: '[]',
    });
    expect(result.structuredContent).toEqual({
      status: 200,
      headers: { Link: '</v1/pets?limit=2&status=sold&categoryId=-4&cursor=AbC_-1>; rel="next"', ETag: '"t"' },
      body: [],
      next: { limit: 2, status: 'sold', categoryId: -4, cursor: 'AbC_-1' },
    });
  });

  test('when a 304 comes back, then the result has no body', () => {
    expect(resultOf(tool('getPet'), { status: 304, headers: { etag: '"t"' }, text: '' }).structuredContent).toEqual({
      status: 304,
      headers: { ETag: '"t"' },
    });
  });

  test('when a failure without an Error body comes back, then the tool error says so', () => {
    const result = resultOf(tool('listPets'), { status: 502, headers: {}, text: '<html>' });
    expect(result).toEqual({ isError: true, content: [{ type: 'text', text: 'listPets failed: 502 with no Error body' }] });
  });
});

describe('a request that fails on the way', () => {
  const to = (port: number): Loopback => ({
    address: '127.0.0.1',
    port,
    host: 'x',
    authorization: 'Bearer k',
    requestId: 'r',
    trace: {},
    agent: false,
  });

  test('when the connection is refused (the server is stopping), then 503: nothing was done', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    const err = await send(to(port), 'POST', made('createPet', { body: { name: 'Rex', categoryId: 1 } })).catch((e: unknown) => e);
    expect(bodyOf(unreachedResult(tool('createPet'), err))).toMatchObject({ code: 'service_unavailable', status: 503 });
  });

  test('when the connection drops once the request was sent, then no 503: the create may have run, and the retry is named', async () => {
    const server = createServer((socket) => socket.once('data', () => socket.destroy()));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const err = await send(to(port), 'POST', made('createPet', { body: { name: 'Rex', categoryId: 1 } })).catch((e: unknown) => e);
    await new Promise((resolve) => server.close(resolve));
    expect(bodyOf(unreachedResult(tool('createPet'), err))).toMatchObject({
      code: 'internal_error',
      status: 500,
      message: expect.stringContaining('may or may not have run'),
    });
  });

  test('when a kept-alive connection is closed under a read, then the read is sent once more on a new one; a write is not', async () => {
    // Answers the first request of each connection and keeps it open; resets a connection at its second request.
    const server = createServer((socket) => {
      let requests = 0;
      socket.on('data', () => {
        requests += 1;
        if (requests > 1) socket.destroy();
        else socket.write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\n[]');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const agent = loopbackAgent();
    try {
      const at = { ...to(port), agent };
      expect((await send(at, 'GET', made('listPets', {}))).status).toBe(200);
      // The same connection again: reset under the read, which is resent on a new connection.
      expect((await send(at, 'GET', made('listPets', {}))).status).toBe(200);
      expect((await send(at, 'POST', made('createPet', { body: { name: 'Rex', categoryId: 1 } }))).status).toBe(200);
      await expect(send(at, 'POST', made('createPet', { body: { name: 'Rex', categoryId: 1 } }))).rejects.toMatchObject({
        code: 'ECONNRESET',
      });
    } finally {
      agent.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
