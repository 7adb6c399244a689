import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { ContractChecker } from '../../../src/contract/contractChecker';
import { createHttpServer, listen } from '../../../src/http/server';
import { mcpTools } from '../../../generated/mcp-tools';
import {
  API_KEY,
  OTHER_API_KEY,
  type TestApp,
  auth,
  buildNewPet,
  insertPet,
  insertPets,
  issueKey,
  listenOnLoopback,
  startTestApp,
  checkerOfFile,
} from '../../support/harness';
import { checkedCall, connectMcp, errorBodyOf, textOf } from '../../support/mcp';

/*
 * /mcp driven by the MCP SDK's own client over a real socket, against the app as production builds
 * it with MCP_ENABLED=true: the tools a key is shown, and what each call does and answers. Every
 * result is checked against the spec (checkedCall). The HTTP-level rules of /mcp: mcpRefusals.test.ts.
 */
let t: TestApp;
let origin: string;
let listening: Awaited<ReturnType<typeof listenOnLoopback>>;
let checker: ContractChecker;
const clients: Client[] = [];
const connect = async (key: string | undefined) => {
  const client = await connectMcp(origin, key);
  clients.push(client);
  return client;
};

beforeAll(async () => {
  t = await startTestApp({ mcp: { loopbackOnly: true }, rateLimit: { requests: 1_000_000, windowSeconds: 60 }, database: 'file' });
  listening = await listenOnLoopback(t.app);
  origin = listening.origin;
  checker = await checkerOfFile();
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await listening.close();
  await t.close();
});

const names = async (client: Client) => (await client.listTools()).tools.map((tool) => tool.name).sort();

describe('tools/list', () => {
  test('when a key holds pets:read only, then it is shown the read tools and no tool that writes', async () => {
    const reader = await issueKey(t, { scopes: ['pets:read'] });
    expect(await names(await connect(reader.key))).toEqual(['getPet', 'listPets']);
  });

  test('when a key holds pets:write only, then it is shown createPet alone', async () => {
    const writer = await issueKey(t, { scopes: ['pets:write'] });
    expect(await names(await connect(writer.key))).toEqual(['createPet']);
  });

  test('when a key holds every scope, then every tool is listed with the schemas and hints generated from the spec', async () => {
    const { tools } = await (await connect(API_KEY)).listTools();
    expect(tools.map((tool) => tool.name)).toEqual([
      'listPets',
      'createPet',
      'getPet',
      'listWebhookEndpoints',
      'createWebhookEndpoint',
      'getWebhookEndpoint',
      'deleteWebhookEndpoint',
      'rotateWebhookEndpointSecret',
    ]);
    for (const tool of tools) {
      const generated = mcpTools.find((g) => g.name === tool.name);
      expect(tool).toMatchObject({ inputSchema: generated?.inputSchema, outputSchema: generated?.outputSchema, title: generated?.title });
    }
    const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
    expect(byName.listPets?.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    expect(byName.createPet?.annotations).toMatchObject({ readOnlyHint: false });
    expect(byName.createPet?.inputSchema.required).toEqual(['body']);
    expect(Object.keys(byName.createPet?.inputSchema.properties ?? {})).toEqual(['idempotencyKey', 'body']);
    expect(byName.getPet?.description).toMatch(/^Deprecated since 2026-11-22, removed on 2030-12-05: use the tool listPets instead\./);
    expect(byName.deleteWebhookEndpoint?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
  });
});

describe('tools/call', () => {
  test('when listPets is walked with a filter through each result’s next, then every matching animal comes once, in id order', async () => {
    const category = 700_000 + Math.floor(Math.random() * 100_000);
    const pets = await insertPets(
      t.sql,
      Array.from({ length: 7 }, (_, i) => ({ name: `Walk ${i}`, categoryId: category, status: i % 3 === 0 ? 'sold' : 'available' })),
    );
    const client = await connect(API_KEY);
    const seen: number[] = [];
    let args: Record<string, unknown> | undefined = { limit: 2, status: 'available', categoryId: category };
    for (let pages = 0; args; pages++) {
      expect(pages).toBeLessThan(10);
      const { structured } = await checkedCall(client, checker, 'listPets', args);
      expect(structured?.status).toBe(200);
      seen.push(...(structured?.body as { id: number }[]).map((p) => p.id));
      args = structured?.next;
      if (args) expect(args).toEqual({ limit: 2, status: 'available', categoryId: category, cursor: expect.any(String) });
    }
    expect(seen).toEqual(pets.filter((p) => p.status === 'available').map((p) => p.id));
  });

  test('when createPet is called twice with the same idempotencyKey, then one animal is stored and the retry is the replay', async () => {
    const client = await connect(API_KEY);
    const body = buildNewPet();
    const args = { idempotencyKey: `mcp-${Date.now()}`, body };
    const first = await checkedCall(client, checker, 'createPet', args);
    const second = await checkedCall(client, checker, 'createPet', args);
    expect(first.structured).toMatchObject({ status: 201, body: { ...body, status: 'available', id: expect.any(Number) } });
    expect(second.structured?.body).toEqual(first.structured?.body);
    expect(second.structured?.headers['Idempotent-Replayed']).toBe('true');
    const rows = await t.sql`SELECT count(*)::int AS n FROM pets WHERE name = ${body.name}`;
    expect(rows[0]?.n).toBe(1);
  });

  test('when 10 agents send one create at once with one idempotencyKey, then one animal is stored and no call reports another', async () => {
    const client = await connect(API_KEY);
    const body = buildNewPet();
    const args = { idempotencyKey: `mcp-race-${Date.now()}`, body };
    const calls = await Promise.all(Array.from({ length: 10 }, () => checkedCall(client, checker, 'createPet', args)));
    const ids = new Set(calls.filter((c) => !c.result.isError).map((c) => (c.structured?.body as { id: number }).id));
    expect(ids.size).toBe(1);
    // The others were told the first was still running (409), to retry; none failed otherwise.
    for (const c of calls.filter((x) => x.result.isError)) expect(errorBodyOf(c.result).code).toBe('idempotency_key_in_use');
    expect((await t.sql`SELECT count(*)::int AS n FROM pets WHERE name = ${body.name}`)[0]?.n).toBe(1);
  });

  test('when getPet is called, then the animal comes with the deprecation notice first and the Deprecation and Sunset headers', async () => {
    const [pet] = await insertPets(t.sql, [{ name: 'Old', categoryId: 5, status: 'pending' }]);
    const { result, structured } = await checkedCall(await connect(API_KEY), checker, 'getPet', { petId: pet?.id });
    expect(result.content[0]).toEqual({
      type: 'text',
      text: expect.stringMatching(/^Deprecated since .*use the tool listPets instead\.$/),
    });
    expect(structured).toMatchObject({
      status: 200,
      body: pet,
      headers: { Deprecation: expect.any(String), Sunset: 'Thu, 05 Dec 2030 00:00:00 GMT' },
    });
  });

  test('when the arguments break the contract, then the tool error names each field, as the 400 does', async () => {
    const client = await connect(API_KEY);
    const bad = await checkedCall(client, checker, 'createPet', { body: { name: '', categoryId: '7', status: 'lost' } });
    expect(bad.result.isError).toBe(true);
    expect(errorBodyOf(bad.result).errors.map((e: { pointer: string; rule: string }) => [e.pointer, e.rule])).toEqual([
      ['/name', 'minLength'],
      ['/categoryId', 'type'],
      ['/status', 'enum'],
    ]);
    expect(textOf(bad.result)).toContain('- body /categoryId (type):');
    const limit = await checkedCall(client, checker, 'listPets', { limit: 0, categoryId: 1.5 });
    expect(
      errorBodyOf(limit.result)
        .errors.map((e: { name: string }) => e.name)
        .sort(),
    ).toEqual(['categoryId', 'limit']);
    const missing = await checkedCall(client, checker, 'createPet', {});
    expect(errorBodyOf(missing.result).errors).toEqual([expect.objectContaining({ in: 'body', pointer: '' })]);
    const doubled = await checkedCall(client, checker, 'createPet', { body: JSON.stringify(buildNewPet()) });
    expect(errorBodyOf(doubled.result).errors).toEqual([expect.objectContaining({ in: 'body', rule: 'type' })]);
  });

  test('when an argument names nothing of the operation, or a path argument is missing, then the call is refused before any request', async () => {
    const client = await connect(API_KEY);
    const unknown = await checkedCall(client, checker, 'listPets', { limt: 5 });
    expect(errorBodyOf(unknown.result).errors).toEqual([
      expect.objectContaining({ in: 'request', name: 'limt', rule: 'additionalProperties' }),
    ]);
    expect(textOf(unknown.result)).toContain('it takes: limit, status, categoryId, cursor, ifNoneMatch');
    const noId = await checkedCall(client, checker, 'getPet', {});
    expect(errorBodyOf(noId.result).errors).toEqual([expect.objectContaining({ in: 'path', name: 'petId', rule: 'required' })]);
  });

  test('when a tool the key may not see is called, then the SDK reports an unknown tool and nothing runs', async () => {
    const before = t.logs().length;
    await expect((await connect(API_KEY)).callTool({ name: 'deletePet', arguments: {} })).rejects.toThrow(/No tool "deletePet"/);
    expect(
      t
        .logs()
        .slice(before)
        .filter((l) => l.req?.path?.startsWith('/v1/')),
    ).toEqual([]);
  });

  test('when a call is made, then the operation’s own request line names the tool, and so do the /mcp line and the metric', async () => {
    const client = await connect(API_KEY);
    const before = t.logs().length;
    await checkedCall(client, checker, 'listPets', { limit: 1 });
    const lines = t.logs().slice(before);
    const inner = lines.find((l) => l.req?.path === '/v1/pets');
    const outer = lines.find((l) => l.req?.path === '/mcp' && l.mcpTool === 'listPets');
    expect(inner).toMatchObject({ operationId: 'listPets', res: { statusCode: 200 }, client: outer?.client });
    expect(inner?.req.id).toBe(`${outer?.req.id}:mcp:listPets`);
    // A caller's own request id of the longest kind is cut so that the operation's id still ends in the tool.
    const long = 'r'.repeat(128);
    const before2 = t.logs().length;
    const res = await fetch(`${origin}/mcp`, {
      method: 'POST',
      headers: { ...auth(), 'X-Request-Id': long, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'listPets', arguments: {} } }),
    });
    expect(res.status).toBe(200);
    await res.text();
    const cut = t
      .logs()
      .slice(before2)
      .find((l) => l.req?.path === '/v1/pets');
    expect(cut?.req.id).toBe(`${'r'.repeat(128 - ':mcp:listPets'.length)}:mcp:listPets`);
    const text = await t.metrics.registry.metrics();
    expect(text).toMatch(/animal_store_mcp_tool_calls_total\{tool="listPets",outcome="ok"\} [1-9]/);
    expect(text).toMatch(/animal_store_http_requests_total\{operationId="listPets",status="200"\} [1-9]/);
  });
});

describe('limits and scopes', () => {
  test('when a read-only key calls createPet, then the answer is HTTP 403 insufficient_scope with its challenge, and nothing is stored', async () => {
    const reader = await issueKey(t, { scopes: ['pets:read'] });
    const body = buildNewPet();
    await expect((await connect(reader.key)).callTool({ name: 'createPet', arguments: { body } })).rejects.toThrow(/403/);
    const raw = await fetch(`${origin}/mcp`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${reader.key}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'createPet', arguments: { body } } }),
    });
    expect(raw.status).toBe(403);
    expect(raw.headers.get('www-authenticate')).toBe('Bearer realm="animal-store", error="insufficient_scope", scope="pets:write"');
    expect(await raw.json()).toEqual({ code: 'insufficient_scope', message: expect.stringContaining('pets:write'), status: 403 });
    expect((await t.sql`SELECT 1 FROM pets WHERE name = ${body.name}`).length).toBe(0);
  });

  test('when the key is missing or wrong, then the SDK client cannot connect: HTTP 401 with the bearer challenge', async () => {
    await expect(connectMcp(origin, undefined)).rejects.toThrow(/401/);
    await expect(connectMcp(origin, 'not-a-key-0123456789abcdef')).rejects.toThrow(/401/);
  });
});

describe('a rate-limited key', () => {
  let limited: TestApp;
  let at: Awaited<ReturnType<typeof listenOnLoopback>>;
  beforeAll(async () => {
    // On the file's database, as the first app (which is still open) is: a key of its own, counted from 0.
    limited = await startTestApp({
      mcp: { loopbackOnly: true },
      rateLimit: { requests: 2, windowSeconds: 60 },
      bootstrapKeys: [OTHER_API_KEY],
      database: 'file',
    });
    at = await listenOnLoopback(limited.app);
  });
  afterAll(async () => {
    await at.close();
    await limited.close();
  });

  test('when its quota is spent, then the tool error says rate_limited and how many seconds to wait', async () => {
    const client = await connectMcp(at.origin, OTHER_API_KEY);
    try {
      for (let i = 0; i < 2; i++) expect((await checkedCall(client, checker, 'listPets', {})).result.isError).toBeFalsy();
      const { result } = await checkedCall(client, checker, 'listPets', {});
      expect(result.isError).toBe(true);
      expect(errorBodyOf(result)).toMatchObject({ code: 'rate_limited', status: 429 });
      expect(textOf(result)).toMatch(/Retry after [1-9][0-9]* seconds\./);
    } finally {
      await client.close();
    }
  });
});

describe('a tool call is a request in process', () => {
  test('when the server starts draining while a tool call is in flight, then the call is answered in full, as any request in flight is', async () => {
    const server = createHttpServer(t.app, { headersTimeoutMs: 2_000, requestTimeoutMs: 5_000, keepAliveTimeoutMs: 5_000 });
    const port = await listen(server, 0, '127.0.0.1');
    let drained: Promise<void> | undefined;
    // The drain begins as soon as the /mcp request has arrived: the server stops accepting before the call runs.
    server.once('request', () => {
      drained = server.drain(5_000);
    });
    const res = await fetch(`http://127.0.0.1:${port}/mcp`, {
      method: 'POST',
      headers: { ...auth(), 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'listPets', arguments: { limit: 1 } } }),
    });
    expect(res.status).toBe(200);
    const { result } = (await res.json()) as { result: { isError?: boolean; structuredContent: { status: number } } };
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent.status).toBe(200);
    await drained;
    expect(server.listening).toBe(false);
  });

  test('when a batch of calls comes with a managed key, then each is the operation’s own request, made as the caller /mcp authenticated', async () => {
    const managed = await issueKey(t, { scopes: ['pets:read'] });
    const before = t.logs().length;
    const batch = await fetch(`${origin}/mcp`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${managed.key}`,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify(
        [1, 2, 3].map((id) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'listPets', arguments: { limit: 1 } } })),
      ),
    });
    expect(batch.status).toBe(200);
    const answers = (await batch.json()) as { result: { structuredContent: { status: number } } }[];
    expect(answers.map((a) => a.result.structuredContent.status)).toEqual([200, 200, 200]);
    // Each call is the operation's own request, recorded as the key and client of the /mcp request: no Authorization of its own.
    const lines = t.logs().slice(before);
    const outer = lines.find((l) => l.req?.path === '/mcp');
    expect(outer).toMatchObject({ mcpTool: 'listPets,listPets,listPets', apiKey: expect.stringMatching(/^asa_/) });
    const inner = lines.filter((l) => l.req?.path === '/v1/pets');
    expect(inner).toHaveLength(3);
    for (const line of inner)
      expect(line).toMatchObject({ apiKey: outer?.apiKey, client: outer?.client, operationId: 'listPets', res: { statusCode: 200 } });
  });

  test('when one plain tools/call is answered without the SDK’s transport, then it answers as the SDK answers the same call in a batch', async () => {
    const pet = await insertPet(t.sql, { name: 'Same', categoryId: 1, status: 'available' });
    const message = { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'getPet', arguments: { petId: pet.id } } };
    const post = (body: unknown) =>
      fetch(`${origin}/mcp`, {
        method: 'POST',
        headers: { ...auth(), 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
        body: JSON.stringify(body),
      });
    const single = await post(message);
    const batch = await post([message]);
    expect([single.status, batch.status]).toEqual([200, 200]);
    expect(single.headers.get('content-type')).toBe(batch.headers.get('content-type'));
    // What differs between two calls is what is left of the quota.
    const withoutQuota = (answer: any) => {
      const strip = (structured: any) => ({ ...structured, headers: { ...structured.headers, RateLimit: undefined } });
      const content = answer.result.content.map(({ text }: { text: string }) => (text.startsWith('{') ? strip(JSON.parse(text)) : text));
      return { ...answer, result: { ...answer.result, structuredContent: strip(answer.result.structuredContent), content } };
    };
    // The SDK answers a batch of one request with that one answer.
    expect(withoutQuota(await single.json())).toEqual(withoutQuota(await batch.json()));
  });
});
