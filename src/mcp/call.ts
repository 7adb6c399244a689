/**
 * One tool call: its arguments made into the operation's request, a value the request core answers
 * in process (http/inProcessDoor.ts) as the caller the /mcp request authenticated, and the answer
 * made into the tool's result.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { parse as parseQuery } from 'node:querystring';
import {
  CallToolRequestSchema,
  type CallToolResult,
  JSONRPCRequestSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';
import { type ErrorBody, type FieldError, errorBody } from '../contract/errorBody';
import type { JsonSchema, McpTool } from '../contract/mcpTools';
import type { AuthenticatedKey } from '../http/auth';
import { bytesBody } from '../http/body';
import { type WrittenReply, type ApiRequest, splitTarget } from '../http/core';

/**
 * A JSON-RPC request that is a tools/call, by the SDK's own schemas composed into one: the
 * transport's (a JSON-RPC request: `jsonrpc` 2.0, an id, nothing else beside `method` and `params`)
 * with the server's (CallToolRequestSchema's method and params). One parse, where each of the two
 * would read the message again.
 */
const JsonRpcToolCallSchema = JSONRPCRequestSchema.extend(CallToolRequestSchema.shape);

/**
 * A single tools/call of a known tool that the SDK's transport and server would take as it is:
 * both media types accepted, a protocol version the SDK supports (or none: its default), a JSON-RPC
 * request and a tools/call by the SDK's own schemas, and no task. Anything else (initialize,
 * tools/list, a batch, a notification, a message they would refuse) is theirs to answer.
 */
export function plainToolCall(headers: IncomingHttpHeaders, body: unknown, tools: ReadonlyMap<string, McpTool>) {
  const version = headers['mcp-protocol-version'];
  if (!headers.accept?.includes('application/json') || !headers.accept.includes('text/event-stream')) return undefined;
  if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version as string)) return undefined;
  const call = (body as { method?: unknown } | null)?.method === 'tools/call' ? JsonRpcToolCallSchema.safeParse(body) : undefined;
  if (!call?.success || call.data.params.task !== undefined) return undefined;
  const tool = tools.get(call.data.params.name);
  return tool ? { id: call.data.id, tool, arguments: call.data.params.arguments ?? {} } : undefined;
}

/** A refusal before any request is made: an argument the tool does not take, or a path argument missing. */
function refused(tool: McpTool, problems: FieldError[]): CallToolResult {
  return errorResult(tool, 400, errorBody(400, 'validation_failed', problems.map((p) => p.detail).join('; '), problems), undefined);
}

/** RFC 9110 §5.5's field-content: a header argument must be what HTTP could carry (a NUL in an Idempotency-Key would reach the database). */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** An argument's text in a URL or a header: a string as it is, a number or a boolean as JSON writes it, anything else as JSON text (which validation then refuses by name). */
const textOf = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));

/** Who makes a call's request: the caller the /mcp request authenticated, with that request's Host, and the call's request id. */
export type CallFrom = { host: string | undefined; requestId: string; caller: AuthenticatedKey };

/**
 * The operation's request a call makes, the value the request core answers (its header arguments
 * lower-case, as Node gives headers; its body framed as HTTP frames one, for the core's body rules),
 * or the refusal of arguments that name nothing of the operation.
 */
export function requestOf(
  tool: McpTool,
  args: Record<string, unknown>,
  from: CallFrom,
): { request: ApiRequest } | { refused: CallToolResult } {
  const known = new Set([...tool.call.arguments.map((a) => a.argument), ...(tool.call.body ? [tool.call.body] : [])]);
  const problems: FieldError[] = Object.keys(args)
    .filter((name) => !known.has(name))
    .map((name) => ({
      in: 'request',
      name: name.slice(0, 256),
      rule: 'additionalProperties',
      detail: `${tool.name} takes no argument ${JSON.stringify(name.slice(0, 64))}; it takes: ${[...known].join(', ')}`,
    }));
  let path = tool.call.path;
  const query = new URLSearchParams();
  const headers: Record<string, string> = {};
  for (const a of tool.call.arguments) {
    const value = args[a.argument];
    if (a.in === 'path') {
      if (value === undefined) problems.push({ in: 'path', name: a.name, rule: 'required', detail: `argument ${a.argument} is required` });
      path = path.replace(`{${a.name}}`, encodeURIComponent(value === undefined ? '' : textOf(value)));
    } else if (value === undefined) continue;
    else if (a.in === 'query') for (const v of Array.isArray(value) ? value : [value]) query.append(a.name, textOf(v));
    else if (HEADER_VALUE.test(textOf(value))) headers[a.name.toLowerCase()] = textOf(value);
    else {
      const detail = `argument ${a.argument} cannot be the ${a.name} header: it holds a control character or one beyond Latin-1`;
      problems.push({ in: 'header', name: a.name, rule: 'http', detail });
    }
  }
  if (problems.length > 0) return { refused: refused(tool, problems) };
  const search = query.toString();
  const body = tool.call.body && args[tool.call.body] !== undefined ? Buffer.from(JSON.stringify(args[tool.call.body])) : undefined;
  if (body) Object.assign(headers, { 'content-type': 'application/json', 'content-length': String(body.length) });
  const { requestId, caller } = from;
  const request = { method: tool.call.method, target: search ? `${path}?${search}` : path, rawHeaders: [], requestId, caller };
  return { request: { ...request, headers: { ...headers, host: from.host }, body: bytesBody(body ?? Buffer.alloc(0)) } };
}

/** The next page's arguments, from `Link: <…>; rel="next"`: its query, each value of the type the tool's input schema gives it. */
function nextArguments(tool: McpTool, link: string | undefined): Record<string, unknown> | undefined {
  const target = link && /<([^>]+)>\s*;\s*rel="next"/.exec(link)?.[1];
  if (!target) return undefined;
  // The link is the core's own: a path on this origin and its query, read as the core reads a request's.
  const { path, query } = splitTarget(target);
  if (path !== tool.call.path) return undefined;
  const values = parseQuery(query);
  const properties = tool.inputSchema.properties as Record<string, JsonSchema>;
  const next: Record<string, unknown> = {};
  for (const a of tool.call.arguments) {
    if (a.in !== 'query') continue;
    const given = values[a.name];
    const value = Array.isArray(given) ? given[0] : given;
    if (value === undefined) continue;
    const type = properties[a.argument]?.type;
    next[a.argument] = (type === 'integer' || type === 'number') && /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value;
  }
  return next;
}

/**
 * A tool's result: whether it is an error, the value the SDK's server returns, and its JSON text as
 * the plain path writes it. A success's structured content is the operation's body as the core
 * wrote it: the text is never parsed to be written again (`value` parses it, for the SDK alone).
 */
export interface ToolResult {
  isError: boolean;
  value(): CallToolResult;
  json(): string;
}

/** A result made as a value (a refusal, a failure): its text is that value's JSON. */
export const resultFrom = (result: CallToolResult): ToolResult => ({
  isError: result.isError === true,
  value: () => result,
  json: () => JSON.stringify(result),
});

/** The reply's headers by lower-case name. */
function byLowerCase(headers: Record<string, string>): Record<string, string | undefined> {
  const sent: Record<string, string> = {};
  for (const name in headers) sent[name.toLowerCase()] = headers[name] as string;
  return sent;
}

/** A success: the status, the documented headers the answer carried (named as the spec names them), the body, and `next` for a paged list. */
function successResult(tool: McpTool, reply: WrittenReply, sent: Record<string, string | undefined>): ToolResult {
  const headers: Record<string, string> = {};
  for (const name of Object.keys((tool.outputSchema.properties as { headers: { properties: object } }).headers.properties)) {
    const value = sent[name.toLowerCase()];
    if (value !== undefined) headers[name] = value;
  }
  const next = tool.call.pages ? nextArguments(tool, headers.Link) : undefined;
  // structuredContent as JSON text, its body as the operation wrote it rather than written again.
  const text = `{"status":${reply.status},"headers":${JSON.stringify(headers)}${reply.body === undefined ? '' : `,"body":${reply.body}`}${next ? `,"next":${JSON.stringify(next)}` : ''}}`;
  const content: CallToolResult['content'] = [{ type: 'text', text }];
  // A deprecated operation answers with Deprecation: the notice its description opens with comes first.
  if (sent.deprecation !== undefined) content.unshift({ type: 'text', text: tool.description.split('\n\n')[0] ?? '' });
  return {
    isError: false,
    value: () => ({ content, structuredContent: JSON.parse(text) as Record<string, unknown> }),
    json: () => `{"content":${JSON.stringify(content)},"structuredContent":${text}}`,
  };
}

/** A failure an agent can act on: the Error body's code and message, each failing field, and how long to wait when told to. */
function errorResult(tool: McpTool, status: number, body: ErrorBody | undefined, retryAfter: string | undefined): CallToolResult {
  const lines = [`${tool.name} failed: ${status} ${body ? `${body.code}: ${body.message}` : 'with no Error body'}`];
  for (const f of body?.errors ?? []) {
    const where = `${f.in}${f.name !== undefined ? ` ${f.name}` : ''}${f.pointer !== undefined ? ` ${f.pointer || '(the whole body)'}` : ''}`;
    lines.push(`- ${where} (${f.rule}): ${f.detail}`);
  }
  if (retryAfter !== undefined) lines.push(`Retry after ${retryAfter} seconds.`);
  return {
    isError: true,
    content: [{ type: 'text', text: lines.join('\n') }, ...(body ? [{ type: 'text' as const, text: JSON.stringify(body) }] : [])],
  };
}

/** The tool's result for the operation's answer. */
export function resultOf(tool: McpTool, reply: WrittenReply): ToolResult {
  const sent = byLowerCase(reply.headers);
  if (tool.call.successes.includes(reply.status)) return successResult(tool, reply, sent);
  let body: ErrorBody | undefined;
  try {
    const parsed = JSON.parse(reply.body ?? '') as ErrorBody;
    if (typeof parsed?.code === 'string' && typeof parsed.message === 'string') body = parsed;
  } catch {
    body = undefined;
  }
  return resultFrom(errorResult(tool, reply.status, body, sent['retry-after']));
}
