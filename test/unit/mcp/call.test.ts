import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { mcpTools } from '../../../generated/mcp-tools';
import { headerArgument } from '../../../src/contract/mcpTools';
import { plainToolCall, requestOf, resultOf } from '../../../src/mcp/call';

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
const caller = { keyId: 'k', clientId: 'c', client: 'c', scopes: new Set(['pets:read', 'pets:write']), expiresHeader: undefined };
const from = { host: '127.0.0.1:3000', requestId: 'r:mcp:t', caller };
const made = (name: string, args: Record<string, unknown>) => {
  const r = requestOf(tool(name), args, from);
  if ('refused' in r) throw new Error(JSON.stringify(r.refused));
  return r.request;
};

describe('arguments into a request', () => {
  test('when a header parameter is named, then its argument is its camelCase name', () => {
    expect(['Idempotency-Key', 'If-None-Match', 'X-Request-ID'].map(headerArgument)).toEqual([
      'idempotencyKey',
      'ifNoneMatch',
      'xRequestId',
    ]);
  });

  test('when arguments of every kind are given, then each goes where the operation takes it, as text', async () => {
    expect(made('listPets', { limit: 5, status: 'sold', categoryId: -3, ifNoneMatch: '"x"' })).toMatchObject({
      method: 'GET',
      target: '/v1/pets?limit=5&status=sold&categoryId=-3',
      headers: { 'if-none-match': '"x"', host: '127.0.0.1:3000' },
    });
    expect(made('getPet', { petId: '1/../2' }).target).toBe('/v1/pets/1%2F..%2F2');
    const create = made('createPet', { body: { name: 'Rex', categoryId: 1 }, idempotencyKey: 'k' });
    expect(create).toMatchObject({ method: 'POST', target: '/v1/pets', headers: { 'idempotency-key': 'k' } });
    expect((await create.body.read()).toString()).toBe('{"name":"Rex","categoryId":1}');
  });

  test('when the request is made, then it is the caller’s, with the /mcp request’s Host and its body framed as HTTP frames it', async () => {
    const request = made('createPet', { body: { name: 'Rex', categoryId: 1 } });
    expect(request).toMatchObject({
      headers: { host: '127.0.0.1:3000', 'content-type': 'application/json', 'content-length': '29' },
      rawHeaders: [],
      requestId: 'r:mcp:t',
      caller,
    });
    expect(made('listPets', {}).headers).not.toHaveProperty('content-length');
    expect((await made('listPets', {}).body.read()).length).toBe(0);
  });

  test('when a value is not a string or number, then it is sent as its JSON text, for validation to refuse by name', () => {
    expect(made('listPets', { limit: { $gt: 1 }, status: null }).target).toBe('/v1/pets?limit=%7B%22%24gt%22%3A1%7D&status=null');
    expect(made('listPets', { status: ['sold', 'pending'] }).target).toBe('/v1/pets?status=sold&status=pending');
  });

  test('when an argument is unknown, a path argument missing or a header value unsendable, then the call is refused naming each', () => {
    const r = requestOf(tool('getPet'), { id: 1, ifNoneMatch: 'a\r\nX-Evil: 1' }, from);
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
    expect(result.value().structuredContent).toEqual({
      status: 200,
      headers: { Link: '</v1/pets?limit=2&status=sold&categoryId=-4&cursor=AbC_-1>; rel="next"', ETag: '"t"' },
      body: [],
      next: { limit: 2, status: 'sold', categoryId: -4, cursor: 'AbC_-1' },
    });
  });

  test('when a 304 comes back, then the result has no body', () => {
    expect(resultOf(tool('getPet'), { status: 304, headers: { ETag: '"t"' } }).value().structuredContent).toEqual({
      status: 304,
      headers: { ETag: '"t"' },
    });
  });

  test('when a failure without an Error body comes back, then the tool error says so', () => {
    const result = resultOf(tool('listPets'), { status: 502, headers: {}, body: '<html>' });
    expect(result.isError).toBe(true);
    expect(result.value()).toEqual({ isError: true, content: [{ type: 'text', text: 'listPets failed: 502 with no Error body' }] });
  });
  test.each([
    [
      'a page with a next link',
      'listPets',
      { status: 200, headers: { Link: '</v1/pets?limit=1&cursor=AbC>; rel="next"' }, body: '[{"name":"Rex \\"\\u2028","id":1}]' },
    ],
    [
      "a deprecated operation's answer",
      'getPet',
      { status: 200, headers: { Deprecation: '@1', ETag: '"t"' }, body: '{"name":"Rex","id":1}' },
    ],
    ['a 304', 'getPet', { status: 304, headers: { ETag: '"t"' } }],
    [
      'a failure with its Error body',
      'listPets',
      { status: 429, headers: { 'Retry-After': '3' }, body: '{"code":"rate_limited","message":"Slow down","status":429}' },
    ],
  ])('when %s comes back, then the text the plain path writes is the JSON of the value the SDK returns', (_, name, reply) => {
    const result = resultOf(tool(name), reply);
    expect(JSON.parse(result.json())).toEqual(result.value());
    expect(result.isError).toBe(reply.status >= 400);
  });
});

describe('which messages are answered without the SDK’s transport', () => {
  const tools = new Map(mcpTools.map((t) => [t.name, t]));
  const accept = 'application/json, text/event-stream';
  const call = (params: object, extra: object = {}) => ({ jsonrpc: '2.0', id: 7, method: 'tools/call', params, ...extra });

  test('when one plain tools/call of a known tool comes, then it is taken, with its id and arguments', () => {
    expect(plainToolCall({ accept }, call({ name: 'getPet', arguments: { petId: 1 } }), tools)).toEqual({
      id: 7,
      tool: tool('getPet'),
      arguments: { petId: 1 },
    });
    expect(plainToolCall({ accept, 'mcp-protocol-version': '2025-06-18' }, call({ name: 'listPets' }), tools)?.arguments).toEqual({});
  });

  test.each([
    ['Accept lacks text/event-stream (the transport’s 406)', { accept: 'application/json' }, call({ name: 'listPets' })],
    ['an unsupported protocol version (its 400)', { accept, 'mcp-protocol-version': '1999-01-01' }, call({ name: 'listPets' })],
    ['a batch', { accept }, [call({ name: 'listPets' })]],
    ['another method', { accept }, { jsonrpc: '2.0', id: 1, method: 'tools/list' }],
    ['a notification (no id)', { accept }, { jsonrpc: '2.0', method: 'tools/call', params: { name: 'listPets' } }],
    ['no jsonrpc version', { accept }, { id: 1, method: 'tools/call', params: { name: 'listPets' } }],
    ['params the SDK refuses (a name that is no string)', { accept }, call({ name: 5 })],
    ['arguments that are no object', { accept }, call({ name: 'listPets', arguments: 'limit=1' })],
    ['an unknown tool (its InvalidParams)', { accept }, call({ name: 'deletePets' })],
    ['a task', { accept }, call({ name: 'listPets', task: { ttl: 1000 } })],
  ])('when %s, then it is left to the SDK', (_what, headers, body) => {
    expect(plainToolCall(headers, body, tools)).toBeUndefined();
  });
});
