import { ContractChecker } from '../../../src/contract/contractChecker';
import { loadSpec } from '../../../src/contract/spec';
import { type TestDatabase, freshDatabase } from '../../support/databases';
import { type Running, reap, reapAll, spawnServer, startServer, stop } from '../../support/processes';
import { type ScratchProject, scratchProject, withCountPets } from '../../support/scratch';

// docs/contract.md's "Adding an operation, step by step" (the README's "Changing the contract" in brief), on a copy of the project: an operation
// (GET /pets/count → countPets) and an optional property are added to the spec; the mock serves
// the new operation at once; generate writes its stub; the type check passes; the server starts
// and answers it 501, saying so; the stub is filled in (a wrong reply fails the type check);
// and the server answers 200 with a body the contract checker accepts.
const KEY = 'edit-loop-key-0123456789';
let project: ScratchProject;
let db: TestDatabase;
let checker: ContractChecker;
beforeAll(async () => {
  project = scratchProject();
  db = await freshDatabase();
});
afterAll(async () => {
  reapAll();
  await db.drop();
  project.remove();
});
const dbEnv = () => ({
  DATABASE_URL: db.url,
  API_KEYS: KEY,
  ...(process.env.TEST_DB_MODE === 'embedded' ? { ON_UNSAFE_DATABASE: 'warn' } : {}),
});

/** A request to a running copy, its response checked against the copy's spec. */
async function call(server: Running, method: string, path: string, body?: unknown) {
  const res = await fetch(`${server.origin}${path}`, {
    method,
    headers: { Authorization: `Bearer ${KEY}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const received = { status: res.status, headers: Object.fromEntries(res.headers), body: await res.json() };
  checker.check(method, path, received);
  return received;
}

/** One JSON-RPC request to the copy's /mcp (stateless: no initialize needed), its result. */
async function mcp(server: Running, method: string, params: object) {
  const res = await fetch(`${server.origin}/mcp`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { result: unknown }).result;
}

async function stopped(server: Running) {
  await stop(server);
  reap(server.child);
}

const outputOf = (r: { status: number | null; stdout: string; stderr: string }) => `exit ${r.status}\n${r.stdout}${r.stderr}`;

test('when an operation is added to the spec, generated, type-checked, served as a stub and filled in, then it answers 501 and then 200 within the contract', async () => {
  // 1. Edit the spec.
  project.write('spec/openapi.yaml', withCountPets(project.read('spec/openapi.yaml')));
  checker = await ContractChecker.create(await loadSpec(project.file('spec/openapi.yaml')));

  // The mock serves the new operation before anything is generated.
  const mock = await startServer(
    { API_KEYS: KEY },
    [project.file('node_modules/.bin/ts-node'), '--transpile-only', 'scripts/mock/cli.ts'],
    project.dir,
  );
  try {
    expect(await call(mock, 'GET', '/v1/pets/count')).toMatchObject({ status: 200, body: { count: 2 } });
  } finally {
    await stopped(mock);
  }

  // 2. npm run generate: the types, the registry, the stub and its test file.
  const generated = project.run(['npm', 'run', '-s', 'generate']);
  expect(outputOf(generated)).toContain('created src/handlers/countPets.ts (a stub answering 501 not_implemented: fill it in)');
  expect(generated.stdout).toContain('created test/component/operations/countPets.test.ts');
  // Its MCP tool comes with it: nothing about /mcp is written by hand.
  expect(generated.stdout).toContain('updated generated/mcp-tools.ts');

  // 3. The type check passes with the stub.
  expect(outputOf(project.run(['npm', 'run', '-s', 'typecheck']))).toBe('exit 0\n');

  // 4. npm start serves it: 501, and the start-up notice names it.
  let server = await startServer(dbEnv(), ['npm', 'start'], project.dir);
  try {
    expect(server.output()).toContain(
      '1 operation(s) are still generated stubs answering 501 not_implemented: countPets (src/handlers/countPets.ts)',
    );
    expect(await call(server, 'GET', '/v1/pets/count')).toMatchObject({
      status: 501,
      body: { code: 'not_implemented', message: 'countPets is not implemented yet: fill in src/handlers/countPets.ts', status: 501 },
    });
  } finally {
    await stopped(server);
  }

  // With ALLOW_STUBS=false, start-up refuses, naming the stub.
  const refused = spawnServer({ ...dbEnv(), ALLOW_STUBS: 'false' }, [process.execPath, 'dist/src/main.js'], project.dir);
  expect(await refused.exit).toBe(78);
  expect(refused.output()).toContain(
    'ALLOW_STUBS=false and 1 operation(s) are still generated stubs: countPets (src/handlers/countPets.ts)',
  );

  // 5. Fill in the stub. A reply the spec does not document fails the type check, naming the handler.
  const handler = (body: string) => `import type { OperationHandler } from '../contract/handlers';

export const countPets: OperationHandler<'countPets'> = async ({ deadline }, { pets }) => {
  const page = await pets.list({ limit: 100 }, deadline);
  return { status: 200, body: ${body} };
};
`;
  project.write('src/handlers/countPets.ts', handler('{ total: page.pets.length }'));
  const wrong = project.run(['npm', 'run', '-s', 'typecheck']);
  expect(wrong.status).not.toBe(0);
  expect(outputOf(wrong)).toMatch(
    /src\/handlers\/countPets\.ts\(\d+,\d+\): error TS2322: [\s\S]*Property 'count' is missing in type '\{ total: number; \}'/,
  );
  project.write('src/handlers/countPets.ts', handler('{ count: page.pets.length }'));
  expect(outputOf(project.run(['npm', 'run', '-s', 'typecheck']))).toBe('exit 0\n');

  // 6. npm start again: 200 with the count, no stub left; with MCP on, the agent's tool answers the same.
  server = await startServer({ ...dbEnv(), MCP_ENABLED: 'true' }, ['npm', 'start'], project.dir);
  try {
    expect(server.output()).not.toContain('generated stubs');
    await call(server, 'POST', '/v1/pets', { name: 'Rex', categoryId: 1 });
    expect(await call(server, 'GET', '/v1/pets/count')).toMatchObject({ status: 200, body: { count: 1 } });
    expect(await mcp(server, 'tools/list', {})).toMatchObject({
      tools: expect.arrayContaining([expect.objectContaining({ name: 'countPets' })]),
    });
    expect(await mcp(server, 'tools/call', { name: 'countPets', arguments: {} })).toMatchObject({
      structuredContent: { status: 200, body: { count: 1 } },
    });
  } finally {
    await stopped(server);
  }
}, 300_000);
