import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { mcpTools } from '../../../generated/mcp-tools';
import { headerArgument } from '../../../src/contract/mcpTools';
import { operationRequest, requestOf, resultOf } from '../../../src/mcp/call';

/*
 * A tool call's arguments made into the operation's request (the value the request core answers),
 * and its answer made into the tool's result. The calls through the app: test/component/http/mcp*.test.ts.
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
      method: 'GET',
      target: '/v1/pets?limit=5&status=sold&categoryId=-3',
      headers: { 'if-none-match': '"x"' },
      body: undefined,
    });
    expect(made('getPet', { petId: '1/../2' }).target).toBe('/v1/pets/1%2F..%2F2');
    expect(made('createPet', { body: { name: 'Rex', categoryId: 1 }, idempotencyKey: 'k' })).toEqual({
      method: 'POST',
      target: '/v1/pets',
      headers: { 'idempotency-key': 'k' },
      body: Buffer.from('{"name":"Rex","categoryId":1}'),
    });
  });

  test('when the request is made, then it is the caller’s, with the /mcp request’s Host and its body framed as HTTP frames it', async () => {
    const caller = { keyId: 'k', clientId: 'c', client: 'c', scopes: new Set(['pets:write']), expiresHeader: undefined };
    const request = operationRequest(made('createPet', { body: { name: 'Rex', categoryId: 1 } }), {
      host: '127.0.0.1:3000',
      requestId: 'r:mcp:createPet',
      caller,
    });
    expect(request).toMatchObject({
      method: 'POST',
      target: '/v1/pets',
      headers: { host: '127.0.0.1:3000', 'content-type': 'application/json', 'content-length': '29' },
      requestId: 'r:mcp:createPet',
      caller,
    });
    expect((await request.body.read()).toString()).toBe('{"name":"Rex","categoryId":1}');
    expect(operationRequest(made('listPets', {}), { host: undefined, requestId: 'r', caller }).headers).not.toHaveProperty(
      'content-length',
    );
  });

  test('when a value is not a string or number, then it is sent as its JSON text, for validation to refuse by name', () => {
    expect(made('listPets', { limit: { $gt: 1 }, status: null }).target).toBe('/v1/pets?limit=%7B%22%24gt%22%3A1%7D&status=null');
    expect(made('listPets', { status: ['sold', 'pending'] }).target).toBe('/v1/pets?status=sold&status=pending');
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
      headers: { Link: '</v1/pets?limit=2&status=sold&categoryId=-4&cursor=AbC_-1>; rel="next"', ETag: '"t"', 'X-Other': 'no' },
      body: '[]',
    });
    expect(result.structuredContent).toEqual({
      status: 200,
      headers: { Link: '</v1/pets?limit=2&status=sold&categoryId=-4&cursor=AbC_-1>; rel="next"', ETag: '"t"' },
      body: [],
      next: { limit: 2, status: 'sold', categoryId: -4, cursor: 'AbC_-1' },
    });
  });

  test('when a 304 comes back, then the result has no body', () => {
    expect(resultOf(tool('getPet'), { status: 304, headers: { ETag: '"t"' } }).structuredContent).toEqual({
      status: 304,
      headers: { ETag: '"t"' },
    });
  });

  test('when a failure without an Error body comes back, then the tool error says so', () => {
    const result = resultOf(tool('listPets'), { status: 502, headers: {}, body: '<html>' });
    expect(result).toEqual({ isError: true, content: [{ type: 'text', text: 'listPets failed: 502 with no Error body' }] });
  });
});
