import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { mcpTools } from '../../../generated/mcp-tools';
import { ContractChecker } from '../../../src/contract/contractChecker';
import { connect } from '../../../src/store/database/db';
import { createKey } from '../../../src/store/keys/admin';
import { migrate } from '../../../src/store/database/migrate';
import { type TestDatabase, freshDatabase } from '../../support/databases';
import { type Running, reapAll, startServer, stop } from '../../support/processes';
import { checkedCall, connectMcp, errorBodyOf, textOf } from '../../support/mcp';

/*
 * The real server (src/main.ts, configured from its environment) with MCP_ENABLED=true, driven by
 * the MCP SDK's own client: a managed read-only key and an API_KEYS key, each tool called, every
 * result checked against the spec. What the component tests prove in depth: test/component/http/mcp*.test.ts.
 */
const KEY = 'mcp-process-key-0123456789';
let db: TestDatabase;
let server: Running;
let checker: ContractChecker;
let readOnlyKey: string;
/** A client of its own, used only once the quota is small: the windows of a client are kept in the database, across restarts. */
let limitedKey: string;
const clients: Client[] = [];
const connectWith = async (key: string) => {
  const client = await connectMcp(server.origin, key);
  clients.push(client);
  return client;
};

const serverEnv = () => ({
  DATABASE_URL: db.url,
  API_KEYS: KEY,
  MCP_ENABLED: 'true',
  ...(process.env.TEST_DB_MODE === 'embedded' ? { ON_UNSAFE_DATABASE: 'warn' } : {}),
});

beforeAll(async () => {
  db = await freshDatabase();
  // The key is made before the server starts: the embedded test database serves one connection at a time.
  const sql = connect(db.url, { max: 1 });
  await migrate(sql);
  readOnlyKey = (await createKey(sql, { client: 'mcp-reader', scopes: ['pets:read'], actor: 'test' })).key;
  limitedKey = (await createKey(sql, { client: 'mcp-limited', scopes: ['pets:read'], actor: 'test' })).key;
  await sql.end();
  server = await startServer(serverEnv());
  checker = await ContractChecker.create();
}, 60_000);
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  if (server) await stop(server);
  reapAll();
  await db?.drop();
});

test('when a read-only key and a read-write key list the tools, then the read-only one is shown no tool that writes', async () => {
  const names = async (key: string) => (await (await connectWith(key)).listTools()).tools.map((t) => t.name);
  // The managed key reaches the server's registry within its refresh.
  let reader: string[] = [];
  for (let i = 0; i < 50 && reader.length === 0; i++) {
    reader = await names(readOnlyKey).catch(() => []);
    if (reader.length === 0) await new Promise((r) => setTimeout(r, 100));
  }
  expect(reader).toEqual(['listPets', 'getPet']);
  expect(server.output()).toContain(`MCP: ${server.origin}/mcp (MCP_ENABLED; docs/mcp.md), with the same keys`);
  // A key with every scope is shown every generated tool (test/component/http/mcp.test.ts names them).
  expect(await names(KEY)).toEqual(mcpTools.map((tool) => tool.name));
});

test('when an agent creates twice with one idempotencyKey, walks a filtered list and reads one animal, then each result is the API’s', async () => {
  const client = await connectWith(KEY);
  const args = { idempotencyKey: 'agent-retry-1', body: { name: 'Mcp Rex', categoryId: 42 } };
  const first = await checkedCall(client, checker, 'createPet', args);
  const retry = await checkedCall(client, checker, 'createPet', args);
  expect(retry.structured?.body).toEqual(first.structured?.body);
  for (const name of ['Mcp Tom', 'Mcp Kit'])
    await checkedCall(client, checker, 'createPet', { body: { name, categoryId: 42, status: 'sold' } });

  const seen: string[] = [];
  let page: Record<string, unknown> | undefined = { categoryId: 42, limit: 1 };
  while (page) {
    const { structured } = await checkedCall(client, checker, 'listPets', page);
    seen.push(...(structured?.body as { name: string }[]).map((p) => p.name));
    page = structured?.next;
  }
  // Rex once: the retry stored nothing.
  expect(seen).toEqual(['Mcp Rex', 'Mcp Tom', 'Mcp Kit']);

  const id = (first.structured?.body as { id: number }).id;
  const { result } = await checkedCall(await connectWith(readOnlyKey), checker, 'getPet', { petId: id });
  expect(result.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('use the tool listPets instead') });
});

test('when the arguments are wrong or the key may not write, then the agent is told which field, or gets the 403', async () => {
  const bad = await checkedCall(await connectWith(KEY), checker, 'listPets', { limit: 101 });
  expect(errorBodyOf(bad.result)).toMatchObject({ code: 'validation_failed', errors: [{ in: 'query', name: 'limit', rule: 'maximum' }] });
  const reader = await connectWith(readOnlyKey);
  await expect(reader.callTool({ name: 'createPet', arguments: { body: { name: 'No', categoryId: 1 } } })).rejects.toThrow(/403/);
  expect(server.output()).toMatch(/"mcpTool":"createPet"/);
});

test('when a key’s quota is spent, then the tool error says rate_limited and how long to wait', async () => {
  // Last: the server is restarted with a small quota (one server at a time on the test database).
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await stop(server);
  server = await startServer({ ...serverEnv(), RATE_LIMIT: '2/1m' });
  const client = await connectWith(limitedKey);
  for (let i = 0; i < 2; i++) expect((await checkedCall(client, checker, 'listPets', { limit: 1 })).result.isError).toBeFalsy();
  const { result } = await checkedCall(client, checker, 'listPets', { limit: 1 });
  expect(errorBodyOf(result)).toMatchObject({ code: 'rate_limited', status: 429 });
  expect(textOf(result)).toMatch(/Retry after [1-9][0-9]* seconds\./);
});
