import fc from 'fast-check';
import { mcpTools } from '../../generated/mcp-tools';
import { petStatusValues } from '../../generated/openapi';
import { ContractChecker } from '../../src/contract/contractChecker';
import { API_KEY, type TestApp, listenOnLoopback, startTestApp } from '../support/harness';

/*
 * What a careless or hostile agent sends to /mcp: JSON-RPC messages with tool names and arguments
 * of every JSON type, JSON inside JSON strings, oversized strings, unknown methods, and valid calls
 * among them. No answer is a 5xx, no tool result reports one, every failure is the API's Error body
 * (checked against the spec) and every valid call succeeds. FUZZ_SEED reproduces a run; FUZZ_MCP_RUNS sets its size.
 */
const RUNS = Number(process.env.FUZZ_MCP_RUNS ?? 400);
const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 2_147_483_647);

let t: TestApp;
let listening: Awaited<ReturnType<typeof listenOnLoopback>>;
let checker: ContractChecker;
beforeAll(async () => {
  t = await startTestApp({ mcp: { loopbackOnly: true } });
  listening = await listenOnLoopback(t.app);
  checker = await ContractChecker.create(t.spec);
});
afterAll(async () => {
  await listening.close();
  await t.close();
});

const argumentNames = [...new Set(mcpTools.flatMap((tool) => [...tool.call.arguments.map((a) => a.argument), 'body']))];
/** Any JSON value, a JSON text of one (double encoding), or a long string. */
const hostileValue = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)),
  fc.string({ minLength: 300, maxLength: 3_000 }),
  fc.constantFrom('1e3', '0x10', ' 5', '-0', '9007199254740993', '\u0000', '\ud800', '../../etc', '%2e%2e'),
);
const hostileCall = fc.record({
  kind: fc.constant('hostile' as const),
  name: fc.oneof(fc.constantFrom(...mcpTools.map((tool) => tool.name)), fc.string({ maxLength: 20 })),
  arguments: fc.oneof(
    fc.dictionary(fc.oneof(fc.constantFrom(...argumentNames), fc.string({ maxLength: 10 })), hostileValue, { maxKeys: 4 }),
    fc.constant({}),
  ),
});
/** No control character: what NewPet's name pattern allows. */
const printable = (s: string) =>
  [...s].every((c) => (c.codePointAt(0) ?? 0) > 0x1f && ((c.codePointAt(0) ?? 0) < 0x7f || (c.codePointAt(0) ?? 0) > 0x9f));
const validCall = fc.oneof(
  fc.record({
    kind: fc.constant('valid' as const),
    name: fc.constant('listPets'),
    arguments: fc.record({ limit: fc.integer({ min: 1, max: 100 }), status: fc.constantFrom(...petStatusValues) }, { requiredKeys: [] }),
  }),
  fc.record({
    kind: fc.constant('valid' as const),
    name: fc.constant('createPet'),
    arguments: fc.record({
      body: fc.record({
        name: fc.string({ minLength: 1, maxLength: 200 }).filter(printable),
        categoryId: fc.integer(),
      }),
    }),
  }),
);

async function rpc(message: object): Promise<{ status: number; body: any }> {
  const res = await fetch(`${listening.origin}/mcp`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${API_KEY}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify(message),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

describe('/mcp fuzzing', () => {
  test(`when ${RUNS} generated tools/call and other messages are sent, then none is a 5xx, failures are Error bodies, valid calls succeed`, async () => {
    console.log(`fuzzing /mcp with ${RUNS} messages, FUZZ_SEED=${SEED}`);
    const tally = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          { arbitrary: hostileCall, weight: 3 },
          { arbitrary: validCall, weight: 1 },
          {
            arbitrary: fc.record({ kind: fc.constant('method' as const), name: fc.string({ maxLength: 30 }), arguments: fc.constant({}) }),
            weight: 1,
          },
        ),
        async (g) => {
          const message =
            g.kind === 'method'
              ? { jsonrpc: '2.0', id: 1, method: g.name, params: {} }
              : { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: g.name, arguments: g.arguments } };
          const res = await rpc(message);
          const what = `${JSON.stringify(message).slice(0, 400)} → ${res.status} ${JSON.stringify(res.body).slice(0, 400)}`;
          if (res.status >= 500) throw new Error(`5xx: ${what}`);
          const result = res.body?.result;
          const outcome =
            result === undefined ? `http ${res.status}${res.body?.error ? ' rpc error' : ''}` : result.isError ? 'tool error' : 'tool ok';
          tally.set(`${g.kind}: ${outcome}`, (tally.get(`${g.kind}: ${outcome}`) ?? 0) + 1);
          if (g.kind === 'valid' && outcome !== 'tool ok') throw new Error(`a valid call failed: ${what}`);
          if (result?.isError) {
            const body = JSON.parse(result.content[1].text);
            if (body.status >= 500) throw new Error(`a tool result reports a 5xx: ${what}`);
            checker.check('POST', '/mcp', { status: body.status, headers: { 'content-type': 'application/json' }, body });
          }
        },
      ),
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    );
    console.log(
      `/mcp fuzzing results:\n  ${[...tally]
        .sort()
        .map(([k, v]) => `${k}: ${v}`)
        .join('\n  ')}`,
    );
    expect(tally.get('valid: tool ok')).toBeGreaterThan(RUNS / 20);
    expect(tally.get('hostile: tool error')).toBeGreaterThan(RUNS / 10);
  }, 300_000);
});
