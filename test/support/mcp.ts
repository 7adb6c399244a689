import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ContractChecker } from '../../src/contract/contractChecker';
import { mcpTools } from '../../generated/mcp-tools';

/** The SDK's own client, connected to `<origin>/mcp` with a bearer key (none: no Authorization). */
export async function connectMcp(origin: string, key: string | undefined): Promise<Client> {
  const client = new Client({ name: 'animal-store-tests', version: '1.0.0' });
  const headers: Record<string, string> = key === undefined ? {} : { Authorization: `Bearer ${key}` };
  await client.connect(new StreamableHTTPClientTransport(new URL(`${origin}/mcp`), { requestInit: { headers } }));
  return client;
}

/** The structured result of a successful call, as the tool's output schema describes it. */
export interface Structured {
  status: number;
  headers: Record<string, string>;
  body?: unknown;
  next?: Record<string, unknown>;
}

/** The operation path a call ran on (its path arguments filled in), for the contract checker. */
function pathOf(name: string, args: Record<string, unknown>): { method: string; path: string } {
  const tool = mcpTools.find((t) => t.name === name);
  if (!tool) throw new Error(`no tool ${name}`);
  let path = tool.call.path;
  for (const a of tool.call.arguments.filter((x) => x.in === 'path')) path = path.replace(`{${a.name}}`, String(args[a.argument]));
  return { method: tool.call.method, path };
}

/** The Error body a failed call carries (its second text block). */
export function errorBodyOf(result: CallToolResult): Record<string, any> {
  const block = result.content[1];
  if (block?.type !== 'text') throw new Error(`no Error body in ${JSON.stringify(result)}`);
  return JSON.parse(block.text);
}

/**
 * Calls a tool and checks its result against the spec: a success's body and headers against the
 * operation's response for its status, a failure's Error body against the Error schema.
 */
export async function checkedCall(client: Client, checker: ContractChecker, name: string, args: Record<string, unknown>) {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  if (!result.isError) {
    const { method, path } = pathOf(name, args);
    const s = result.structuredContent as unknown as Structured;
    const headers = Object.fromEntries(Object.entries(s.headers).map(([k, v]) => [k.toLowerCase(), v]));
    const text = s.body === undefined ? '' : JSON.stringify(s.body);
    checker.check(method, path, { status: s.status, headers: { ...headers, 'content-type': 'application/json' }, body: s.body, text });
    return { result, structured: s };
  }
  const body = errorBodyOf(result);
  // The result carries the Error body, not the answer's headers: the body is checked (Error schema, its status, `errors` on a 400 only).
  checker.check('POST', '/mcp', { status: body.status, headers: { 'content-type': 'application/json' }, body });
  return { result, structured: undefined };
}

export const textOf = (result: CallToolResult): string => result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
