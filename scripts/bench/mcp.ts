/**
 * The bench's MCP tool call: `tools/call listPets {limit: 20}` on POST /mcp (MCP_ENABLED=true), beside
 * the same page asked for directly, on the product as production runs it. A tool call is the
 * operation's own request, answered by the request core in process (src/mcp/call.ts), so it costs
 * that request's work without its HTTP, plus the /mcp request and the SDK's JSON-RPC handling: what
 * this section measures.
 */
import { type PairSection, type Scenario, auth, f2, sideBySide } from './measure';

/** The connection counts a tool call is measured at: its fixed cost shows at the lower. */
export const MCP_CONNECTIONS = [10, 50] as const;

/** The tool call this section loads (and `npm run bench:profile -- --scenario mcp` profiles): the first page through /mcp. */
export const MCP_TOOL_CALL: Scenario = {
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

/** The tool call beside the direct read at each of MCP_CONNECTIONS: the CPU ratio at each. */
export const mcpCalls = async (
  ...[server, key, o, out]: Parameters<PairSection>
): Promise<{ clean: boolean; ratios: { connections: number; cpuRatio: number }[] }> => {
  const path = '/v1/pets?limit=20';
  const direct: Scenario = {
    name: `${path} (the operation, directly)`,
    database: true,
    expected: 200,
    request: (k) => ({ method: 'GET', path, headers: auth(k) }),
  };
  const tool = MCP_TOOL_CALL;
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
  out('');
  out('## MCP tool calls: the first page through /mcp\n');
  out(
    `The first page (limit=20) asked for directly, beside the same page as an MCP tool call (one JSON-RPC message per POST, answered as JSON), at ${MCP_CONNECTIONS.join(' and at ')} connections; ${o.rounds} interleaved round(s) after a warm-up. The server's CPU counts the /mcp request and the operation's own request, answered in process.\n`,
  );
  let clean = true;
  const ratios: { connections: number; cpuRatio: number }[] = [];
  for (const connections of MCP_CONNECTIONS) {
    const side = await sideBySide(server, [direct, tool], key, { ...o, connections }, out, `request, ${connections} connections`);
    clean &&= side.clean;
    ratios.push({ connections, cpuRatio: side.cpuRatio });
    out('');
  }
  out(`server CPU per request, tool call / direct: ${ratios.map((r) => `${f2(r.cpuRatio)} at ${r.connections} connections`).join(', ')}`);
  return { clean, ratios };
};
