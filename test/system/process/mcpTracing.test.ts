import { randomBytes } from 'node:crypto';
import { type TestDatabase, freshDatabase, serverDatabaseEnv } from '../../support/databases';
import { type ExportedSpan, type OtlpReceiver, startOtlpReceiver } from '../../support/otlp';
import { reapAll, startServer, stop } from '../../support/processes';

/*
 * A tool call in a trace: the real server with MCP_ENABLED=true exporting over OTLP/HTTP to a
 * receiver here. The /mcp request's server span is the caller's child; the tool call is its child;
 * the operation's own server span, for the request the tool call made, is the tool call's child.
 */
const KEY = 'mcp-tracing-key-0123456789';
const hexId = (bytes: number) => randomBytes(bytes).toString('hex');

let db: TestDatabase;
let receiver: OtlpReceiver;
const caller = { traceId: hexId(16), spanId: hexId(8) };
let status: number;
let lines: Record<string, any>[];

beforeAll(async () => {
  db = await freshDatabase();
  receiver = await startOtlpReceiver();
  const server = await startServer({
    ...serverDatabaseEnv(db.url),
    API_KEYS: KEY,
    MCP_ENABLED: 'true',
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
  });
  const res = await fetch(`${server.origin}/mcp`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${KEY}`,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      traceparent: `00-${caller.traceId}-${caller.spanId}-01`,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'listPets', arguments: { limit: 1 } } }),
  });
  status = res.status;
  await res.text();
  // The last spans are exported at shutdown.
  expect(await stop(server)).toBe(0);
  lines = server
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line));
}, 60_000);
afterAll(async () => {
  reapAll();
  await receiver?.close();
  await db?.drop();
});

test('when an agent calls a tool with a traceparent, then /mcp, the tool call and the operation’s request are one tree of spans', () => {
  expect(status).toBe(200);
  const spans = receiver.spans.filter((s) => s.traceId === caller.traceId);
  const named = (name: string) => spans.find((s) => s.name === name) as ExportedSpan;
  expect(named('POST /mcp')).toMatchObject({ kind: 'SERVER', parentSpanId: caller.spanId });
  expect(named('mcp tool listPets').parentSpanId).toBe(named('POST /mcp').spanId);
  expect(named('GET /v1/pets')).toMatchObject({ kind: 'SERVER', parentSpanId: named('mcp tool listPets').spanId });
  // Both request lines carry the caller's trace: the log and the trace tell one story.
  const traced = lines.filter((l) => l.trace_id === caller.traceId).map((l) => [l.req?.path, l.mcpTool, l.operationId]);
  expect(traced).toEqual(
    expect.arrayContaining([
      ['/mcp', 'listPets', undefined],
      ['/v1/pets', undefined, 'listPets'],
    ]),
  );
});
