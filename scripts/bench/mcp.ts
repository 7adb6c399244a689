/**
 * The bench's MCP tool call: `tools/call listPets {limit: 20}` on POST /mcp (MCP_ENABLED=true), beside
 * the same page asked for directly, on the product as production runs it. A tool call is the
 * operation's own request over loopback (src/mcp/call.ts), so it costs that request, the loopback
 * connection, and the SDK's JSON-RPC handling on top: what this section measures.
 */
import type { ServerProcess } from '../lib/processes';
import { type Load, type Measurement, type Scenario, auth, f2, measure, median } from './measure';

export async function mcpCalls(
  server: ServerProcess,
  key: string,
  o: Load & { rounds: number; smoke: boolean },
  out: (line: string) => void,
): Promise<{ clean: boolean }> {
  const path = '/v1/pets?limit=20';
  const direct: Scenario = {
    name: `${path} (the operation, directly)`,
    database: true,
    expected: 200,
    request: (k) => ({ method: 'GET', path, headers: auth(k) }),
  };
  const tool: Scenario = {
    name: 'POST /mcp tools/call listPets {limit: 20}',
    database: true,
    expected: 200,
    request: (k) => ({
      method: 'POST',
      path: '/mcp',
      headers: { ...auth(k), 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'listPets', arguments: { limit: 20 } } }),
    }),
  };
  // The tool call answers 200 whatever its result: check once that the result is the page, not a tool error.
  const origin = new URL(server.baseUrl).origin;
  const probe = tool.request(key, 0);
  const answer = await fetch(`${origin}/mcp`, {
    method: 'POST',
    headers: probe.headers as Record<string, string>,
    body: probe.body as string,
  });
  const result = ((await answer.json()) as { result?: { isError?: boolean; structuredContent?: { status?: number } } }).result;
  if (answer.status !== 200 || result?.isError || result?.structuredContent?.status !== 200)
    throw new Error(`the tool call does not answer the page: ${answer.status} ${JSON.stringify(result)}`);
  const pair = [direct, tool];
  const runs = pair.map(() => [] as Measurement[]);
  for (let round = o.smoke ? 1 : 0; round <= o.rounds; round++)
    for (const i of round % 2 ? [1, 0] : [0, 1]) {
      const m = await measure(server, pair[i] as Scenario, key, o);
      if (round > 0) runs[i]?.push(m);
    }
  out('');
  out('## MCP tool calls: the first page through /mcp\n');
  out(
    `The first page (limit=20) asked for directly, beside the same page as an MCP tool call (one JSON-RPC message per POST, answered as JSON); ${o.rounds} interleaved round(s) after a warm-up. The server's CPU counts both of a tool call's requests: /mcp and the operation's own, over loopback.\n`,
  );
  out('| request | req/s (median) | p50 ms | p99 ms | server CPU µs/request | errors | unexpected |');
  out('|---|---|---|---|---|---|---|');
  const cpu = (i: number) => median((runs[i] ?? []).map((m) => m.cpuUs));
  pair.forEach((scenario, i) => {
    const ms = runs[i] ?? [];
    out(
      `| ${scenario.name} | ${Math.round(median(ms.map((m) => m.rps)))} | ${median(ms.map((m) => m.p50))} | ${median(ms.map((m) => m.p99))} | ${Math.round(cpu(i))} | ${ms.reduce((a, m) => a + m.errors, 0)} | ${ms.reduce((a, m) => a + m.unexpected, 0)} |`,
    );
  });
  out(`\nserver CPU per request, tool call / direct: ${f2(cpu(1) / cpu(0))}`);
  return { clean: runs.flat().every((m) => m.errors === 0 && m.unexpected === 0) };
}
