/**
 * One tool call, run as the operation's HTTP request to this same server (loopback), with the
 * caller's Authorization: the request pipeline answers it as it answers any client, so the call
 * gets the same key and scope check, rate limit, body rules, validation, deadline, handler, reply
 * check, request log line, metrics and span. Its answer becomes the tool's result.
 */
import { Agent, request } from 'node:http';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { type ErrorBody, type FieldError, errorBody } from '../contract/errorBody';
import type { JsonSchema, McpTool } from '../contract/mcpTools';

/** Where the loopback request goes, and what of the MCP request it carries on. */
export interface Loopback {
  /** The address and port the MCP request arrived on: this server. */
  address: string;
  port: number;
  /** The MCP request's Host and Authorization, as it sent them. */
  host: string;
  authorization: string;
  /** The loopback request's X-Request-Id: the MCP request's, with the tool's name. */
  requestId: string;
  /** Headers that make the loopback request's span a child of the tool call's (`traceparent`). */
  trace: Record<string, string>;
  /** The kept-alive connections of the endpoint (`loopbackAgent`); false: a connection of its own. */
  agent: Agent | false;
}

/** The operation's request: its path and query, its header parameters, its JSON body. */
export interface Made {
  path: string;
  headers: Record<string, string>;
  body: string | undefined;
}

/** What came back from the operation. */
interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** The longest answer read back; the contract's answers are far shorter (a page is at most 100 animals). */
const ANSWER_LIMIT_BYTES = 1024 * 1024;
/** How long a call may wait for its answer; the request's own deadline ends it well before. */
const ANSWER_TIMEOUT_MS = 30_000;

/** A refusal before any request is made: an argument the tool does not take, or a path argument missing. */
function refused(tool: McpTool, problems: FieldError[]): CallToolResult {
  return errorResult(tool, 400, errorBody(400, 'validation_failed', problems.map((p) => p.detail).join('; '), problems), undefined);
}

/** What an HTTP header value may hold (RFC 9110 §5.5: field-content, obs-text included). */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** An argument's text in a URL or a header: a string as it is, a number or a boolean as JSON writes it, anything else as JSON text (which validation then refuses by name). */
const textOf = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));

/** The request a call makes, or the refusal of arguments that name nothing of the operation. */
export function requestOf(tool: McpTool, args: Record<string, unknown>): { made: Made } | { refused: CallToolResult } {
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
    else if (HEADER_VALUE.test(textOf(value))) headers[a.name] = textOf(value);
    else
      problems.push({
        in: 'header',
        name: a.name,
        rule: 'http',
        detail: `argument ${a.argument} cannot be sent as the ${a.name} header: it holds a control character or one beyond Latin-1`,
      });
  }
  if (problems.length > 0) return { refused: refused(tool, problems) };
  const search = query.toString();
  const body = tool.call.body && args[tool.call.body] !== undefined ? JSON.stringify(args[tool.call.body]) : undefined;
  return { made: { path: search ? `${path}?${search}` : path, headers, body } };
}

/**
 * The connections to this server that tool calls reuse (kept alive): a new TCP connection per call
 * cost more than the rest of the loopback. Idle ones are closed after 5 s, well before the server
 * would close them (KEEP_ALIVE_TIMEOUT_MS), and the server closes them itself when it drains.
 */
export const loopbackAgent = () => new Agent({ keepAlive: true, timeout: 5_000 });

/**
 * Sends the operation's request to this server, and reads its answer. A read that finds its
 * kept-alive connection closed under it (the server drained it, ECONNRESET before any answer) is
 * sent once more on a new one: a GET changes nothing. A write is not resent: it may have arrived.
 */
export async function send(to: Loopback, method: string, made: Made): Promise<Answer> {
  try {
    return await sendOnce(to, method, made, to.agent);
  } catch (err) {
    const reset =
      (err as { code?: unknown; reusedSocket?: boolean }).code === 'ECONNRESET' && (err as { reusedSocket?: boolean }).reusedSocket;
    if (!reset || (method !== 'GET' && method !== 'HEAD')) throw err;
    return sendOnce(to, method, made, false);
  }
}

function sendOnce(to: Loopback, method: string, made: Made, agent: Agent | false): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {
      ...made.headers,
      ...to.trace,
      host: to.host,
      authorization: to.authorization,
      accept: 'application/json',
      'x-request-id': to.requestId,
    };
    if (made.body !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = String(Buffer.byteLength(made.body));
    }
    const req = request({ host: to.address, port: to.port, method, path: made.path, headers, agent, timeout: ANSWER_TIMEOUT_MS });
    req.on('timeout', () => req.destroy(new Error(`no answer from ${method} ${made.path} within ${ANSWER_TIMEOUT_MS} ms`)));
    req.on('error', (err) => reject(Object.assign(err, { reusedSocket: req.reusedSocket })));
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > ANSWER_LIMIT_BYTES) req.destroy(new Error(`the answer of ${method} ${made.path} exceeds ${ANSWER_LIMIT_BYTES} bytes`));
        else chunks.push(chunk);
      });
      res.on('error', reject);
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.end(made.body);
  });
}

const headerText = (value: string | string[] | undefined) => (Array.isArray(value) ? value.join(', ') : value);

/** The next page's arguments, from `Link: <…>; rel="next"`: its query, each value of the type the tool's input schema gives it. */
function nextArguments(tool: McpTool, link: string | undefined): Record<string, unknown> | undefined {
  const target = link && /<([^>]+)>\s*;\s*rel="next"/.exec(link)?.[1];
  if (!target) return undefined;
  const url = new URL(target, 'http://service.invalid');
  if (url.pathname !== tool.call.path) return undefined;
  const properties = tool.inputSchema.properties as Record<string, JsonSchema>;
  const next: Record<string, unknown> = {};
  for (const a of tool.call.arguments.filter((arg) => arg.in === 'query')) {
    const value = url.searchParams.get(a.name);
    if (value === null) continue;
    const type = properties[a.argument]?.type;
    next[a.argument] = (type === 'integer' || type === 'number') && /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value;
  }
  return next;
}

/** A success: the status, the documented headers the answer carried (named as the spec names them), the body, and `next` for a paged list. */
function successResult(tool: McpTool, answer: Answer): CallToolResult {
  const documented = Object.keys((tool.outputSchema.properties as { headers: { properties: object } }).headers.properties);
  const headers: Record<string, string> = {};
  for (const name of documented) {
    const value = headerText(answer.headers[name.toLowerCase()]);
    if (value !== undefined) headers[name] = value;
  }
  const structured: Record<string, unknown> = { status: answer.status, headers };
  if (answer.text !== '') structured.body = JSON.parse(answer.text);
  const next = tool.call.pages ? nextArguments(tool, headers.Link) : undefined;
  if (next) structured.next = next;
  const content: CallToolResult['content'] = [{ type: 'text', text: JSON.stringify(structured) }];
  // A deprecated operation answers with Deprecation: the notice its description opens with comes first.
  if (answer.headers.deprecation !== undefined) content.unshift({ type: 'text', text: tool.description.split('\n\n')[0] ?? '' });
  return { content, structuredContent: structured };
}

/** A failure an agent can act on: the Error body's code and message, each failing field, and how long to wait when told to. */
function errorResult(tool: McpTool, status: number, body: ErrorBody | undefined, retryAfter: string | undefined): CallToolResult {
  const lines = [`${tool.name} failed: ${status} ${body ? `${body.code}: ${body.message}` : 'with no Error body'}`];
  for (const f of body?.errors ?? [])
    lines.push(
      `- ${f.in}${f.name !== undefined ? ` ${f.name}` : ''}${f.pointer !== undefined ? ` ${f.pointer || '(the whole body)'}` : ''} (${f.rule}): ${f.detail}`,
    );
  if (retryAfter !== undefined) lines.push(`Retry after ${retryAfter} seconds.`);
  return {
    isError: true,
    content: [{ type: 'text', text: lines.join('\n') }, ...(body ? [{ type: 'text' as const, text: JSON.stringify(body) }] : [])],
  };
}

/** The tool's result for the operation's answer. */
export function resultOf(tool: McpTool, answer: Answer): CallToolResult {
  if (tool.call.successes.includes(answer.status)) return successResult(tool, answer);
  let body: ErrorBody | undefined;
  try {
    const parsed = JSON.parse(answer.text) as ErrorBody;
    if (typeof parsed?.code === 'string' && typeof parsed.message === 'string') body = parsed;
  } catch {
    body = undefined;
  }
  return errorResult(tool, answer.status, body, headerText(answer.headers['retry-after']));
}

/**
 * The result when the operation's request failed on the way. Refused before it was sent (the
 * server is stopping): 503, nothing was done. Lost once sent (no answer in time): it may have run,
 * so it is no 503, whose promise is that nothing happened; a create retried with its idempotencyKey is safe.
 */
export function unreachedResult(tool: McpTool, err: unknown): CallToolResult {
  const reason = err instanceof Error ? err.message : String(err);
  const refusedConnection = (err as { code?: unknown } | undefined)?.code === 'ECONNREFUSED';
  const body: ErrorBody = refusedConnection
    ? errorBody(503, 'service_unavailable', `${tool.name} was not run: ${reason}; retry shortly`)
    : errorBody(
        500,
        'internal_error',
        `${tool.name} may or may not have run: ${reason}; retry it (a create with the same idempotencyKey is safe)`,
      );
  return errorResult(tool, body.status, body, undefined);
}
