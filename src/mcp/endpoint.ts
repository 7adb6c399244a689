/**
 * POST /mcp: the Model Context Protocol over Streamable HTTP (@modelcontextprotocol/sdk), stateless
 * and answering JSON, with one tool per operation that needs a key (generated/mcp-tools.ts). A door
 * of the API's listener beside the request core (http/listener.ts): express never sees /mcp.
 *
 *   1. Host       bound to loopback (HOST): the Host must name loopback (DNS rebinding, refused as the SDK's middleware refuses it)
 *   2. Origin     a browser's request is refused unless its Origin is listed in CORS_ORIGINS
 *   3. method     POST; OPTIONS answers Allow; anything else 405
 *   4. key        the bearer key, as the API checks it: 401 with its challenge (503 when keys cannot be checked)
 *   5. body       read and decoded once, by the API's rules (413, 415, 400)
 *   6. scopes     a tools/call of a tool the key's scopes do not open: 403 insufficient_scope, with the challenge
 *   7. MCP        the SDK's server and transport for this one request: tools/list lists what the key may
 *                 call; tools/call runs the operation's request through the request core, in process,
 *                 as the caller this request authenticated (call.ts). A single plain tools/call, the
 *                 message agents send most, is answered as the transport would answer it, without it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import cors from 'cors';
import type { McpTool } from '../contract/mcpTools';
import { type AuthenticatedKey, type Authenticator, holdsScopes, insufficientScope, unauthorizedError } from '../http/auth';
import { readJsonBody, streamedBody } from '../http/body';
import { HttpError, invalidField } from '../http/errors';
import type { InProcessDoor } from '../http/inProcessDoor';
import { replyToFault } from '../http/reply';
import type { Metrics } from '../ops/metrics';
import { type RequestFacts, setEveryResponseHeaders, withEveryResponseHeaders } from '../ops/requestLog';
import type { Traced } from '../ops/tracing';
import { plainToolCall, requestOf, resultFrom, resultOf } from './call';

export const MCP_PATH = '/mcp';

export interface McpDeps {
  tools: readonly McpTool[];
  /** The API's bearer check: one per app, for both doors. */
  authenticate: Authenticator;
  /** Where a tool call's operation is answered: the request core, in process. */
  call: InProcessDoor;
  /** The service's name and version, as the MCP initialize answer gives them. */
  name: string;
  version: string;
  /** CORS_ORIGINS when it is a list: the only browser origins that may call /mcp (`*` opens none). */
  allowedOrigins: readonly string[];
  /** HOST is a loopback address: the Host header must name loopback too. */
  loopbackOnly: boolean;
  metrics: Metrics;
  /** Each tool call as a step of the /mcp request's trace (`tracedSteps`). */
  traced: Traced;
}

/** What a request to /mcp learns as it is answered, for its log line (RequestFacts.mcpTool among them), and its id. */
export type McpFacts = RequestFacts & { requestId: string };

/** One request to /mcp: Node's request and response, and its facts. */
interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  facts: McpFacts;
}

/** The API's door for /mcp (`mcpDoor`): the listener hands it every request whose path is MCP_PATH. */
export type McpDoor = (req: IncomingMessage, res: ServerResponse, facts: McpFacts) => void;

const recordTool = (facts: McpFacts, name: string) => {
  facts.mcpTool = facts.mcpTool === undefined ? name : `${facts.mcpTool},${name}`;
};

/** The headers of every /mcp response, set one by one for what writes its answer header by header (a refusal, the SDK's transport). */
function setMcpHeaders({ res, facts }: Exchange): void {
  setEveryResponseHeaders(res, facts.requestId);
  res.setHeader('Cache-Control', 'no-store');
}

/** A JSON-RPC message's text as the answer, as the SDK's transport writes one: encoded once, every header in one call. */
function sendJsonRpc({ res, facts }: Exchange, status: number, text: string): void {
  const bytes = Buffer.from(text);
  const headers = { 'Cache-Control': 'no-store', 'Content-Type': 'application/json', 'Content-Length': String(bytes.length) };
  res.writeHead(status, withEveryResponseHeaders(headers, facts.requestId)).end(bytes);
}

/** A JSON-RPC error answered before any message is read (the Host and Origin rules), as the SDK answers them. */
const refusal = (message: string) => JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null });

/** The hostnames a Host may name when the service listens on loopback: those the SDK's DNS-rebinding middleware allows. */
const LOOPBACK_HOSTNAMES = ['localhost', '127.0.0.1', '[::1]'];

/** 1. What is wrong with the Host of a request to a service on loopback, in the SDK's words; undefined when it names loopback. */
function hostRefusal(host: string | undefined): string | undefined {
  if (!host) return 'Missing Host header';
  let hostname: string;
  try {
    hostname = new URL(`http://${host}`).hostname;
  } catch {
    return `Invalid Host header: ${host}`;
  }
  return LOOPBACK_HOSTNAMES.includes(hostname) ? undefined : `Invalid Host: ${hostname}`;
}

/** The JSON-RPC messages of a body: one, or a batch. */
const messagesOf = (body: unknown): unknown[] => (Array.isArray(body) ? body : [body]);

/** 6. The first tools/call in the body whose tool the key's scopes do not open. */
function forbiddenCall(body: unknown, tools: ReadonlyMap<string, McpTool>, key: AuthenticatedKey): McpTool | undefined {
  for (const m of messagesOf(body)) {
    const message = m as { method?: unknown; params?: { name?: unknown } } | null;
    if (message?.method !== 'tools/call' || typeof message.params?.name !== 'string') continue;
    const tool = tools.get(message.params.name);
    if (tool && !holdsScopes(key, tool.scopes)) return tool;
  }
  return undefined;
}

/** A tool call's request id: the /mcp request's, with the tool's name, cut to fit the 128 characters a request id may have. */
const callId = (facts: McpFacts, tool: McpTool) => `${facts.requestId.slice(0, 123 - tool.name.length)}:mcp:${tool.name}`;

/** 7. One call of a tool the key may use: its operation's request answered in process, traced and counted. */
async function callTool(deps: McpDeps, { req, facts }: Exchange, key: AuthenticatedKey, tool: McpTool, args: Record<string, unknown>) {
  recordTool(facts, tool.name);
  const run = async () => {
    const made = requestOf(tool, args, { host: req.headers.host, requestId: callId(facts, tool), caller: key });
    return 'refused' in made ? resultFrom(made.refused) : resultOf(tool, await deps.call(made.request));
  };
  const result = await deps.traced(`mcp tool ${tool.name}`, run);
  deps.metrics.mcpToolCall(tool.name, result.isError ? 'error' : 'ok');
  return result;
}

/** 7. The SDK's server for one request: the tools the key may call, each call run through the API. */
function serverFor(deps: McpDeps, validator: AjvJsonSchemaValidator, exchange: Exchange, key: AuthenticatedKey): Server {
  const visible = new Map(deps.tools.filter((t) => holdsScopes(key, t.scopes)).map((t) => [t.name, t]));
  const server = new Server(
    { name: deps.name, version: deps.version },
    { capabilities: { tools: { listChanged: false } }, jsonSchemaValidator: validator },
  );
  // What a client is shown of a tool: all but how a call is made (`call`) and who may make it (`scopes`).
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [...visible.values()].map(({ call: _c, scopes: _s, ...shown }) => shown),
  }));
  server.setRequestHandler(CallToolRequestSchema, (request) => {
    const tool = visible.get(request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `No tool ${JSON.stringify(request.params.name)}; tools/list names them`);
    return callTool(deps, exchange, key, tool, request.params.arguments ?? {}).then((result) => result.value());
  });
  return server;
}

/**
 * A failure of any step as the API answers one (`replyToFault`: the Error body, its cause kept for the
 * log line, the connection closed when the body left unread may be over the limit), with /mcp's headers;
 * nothing but the connection's end once the answer was begun.
 */
function fault(exchange: Exchange, err: unknown): void {
  if (!exchange.res.headersSent) setMcpHeaders(exchange);
  if (!replyToFault(exchange.req, exchange.res, exchange.facts, err)) exchange.res.destroy();
}

/** Steps 2 to 7 for one request to /mcp (its Host and CORS taken care of). */
function answerer(deps: McpDeps, tools: ReadonlyMap<string, McpTool>): (exchange: Exchange) => Promise<void> {
  // One validator for every request's server: the SDK would make an Ajv instance per server otherwise.
  const validator = new AjvJsonSchemaValidator();
  return async (exchange) => {
    const { req, res, facts } = exchange;
    facts.route = MCP_PATH;
    try {
      const origin = req.headers.origin;
      if (origin !== undefined && !deps.allowedOrigins.includes(origin))
        return sendJsonRpc(
          exchange,
          403,
          refusal(`Origin ${JSON.stringify(origin.slice(0, 200))} may not call /mcp: list it in CORS_ORIGINS`),
        );
      if (req.method === 'OPTIONS') {
        setMcpHeaders(exchange);
        return void res.writeHead(204, { Allow: 'POST, OPTIONS' }).end();
      }
      const notAllowed = `${req.method} is not allowed on /mcp (stateless: POST only); allowed: POST, OPTIONS`;
      if (req.method !== 'POST') throw new HttpError(405, 'method_not_allowed', notAllowed, { Allow: 'POST, OPTIONS' });
      const auth = deps.authenticate(req.headers, req.rawHeaders);
      if (!auth.ok) {
        facts.keyId = auth.keyId;
        throw unauthorizedError(auth);
      }
      facts.keyId = auth.key.keyId;
      facts.client = auth.key.client;
      const decoded = await readJsonBody(req.headers, streamedBody(req), ['application/json']);
      const detail = 'The body must be a JSON-RPC message (a JSON object) or a batch of them';
      if (decoded?.value === undefined || typeof decoded.value !== 'object' || decoded.value === null)
        throw invalidField('malformed_json', { in: 'body', pointer: '', rule: 'type', detail });
      const forbidden = forbiddenCall(decoded.value, tools, auth.key);
      if (forbidden) throw insufficientScope(forbidden.name, forbidden.scopes[0] ?? []);
      // The call agents make most, answered as the SDK's transport would answer it in JSON mode, without it.
      const plain = plainToolCall(req.headers, decoded.value, tools);
      if (plain) {
        const result = await callTool(deps, exchange, auth.key, plain.tool, plain.arguments);
        return sendJsonRpc(exchange, 200, `{"jsonrpc":"2.0","id":${JSON.stringify(plain.id)},"result":${result.json()}}`);
      }
      const server = serverFor(deps, validator, exchange, auth.key);
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on('close', () => void server.close());
      await server.connect(transport);
      setMcpHeaders(exchange);
      await transport.handleRequest(req, res, decoded.value);
    } catch (err) {
      fault(exchange, err);
    }
  };
}

/**
 * The door of /mcp (handed to the listener by createApp when MCP_ENABLED=true): the Host rule on
 * loopback, its own CORS (listed origins only; the API's is not run for /mcp), then the answer.
 */
export function mcpDoor(deps: McpDeps): McpDoor {
  const tools = new Map(deps.tools.map((t) => [t.name, t]));
  const answer = answerer(deps, tools);
  const allowedHeaders = ['Authorization', 'Content-Type', 'Accept', 'Mcp-Protocol-Version', 'Mcp-Session-Id', 'Last-Event-ID'];
  const exposedHeaders = ['Mcp-Session-Id', 'WWW-Authenticate', 'X-Request-Id', 'Retry-After'];
  const origin = [...deps.allowedOrigins];
  const corsHandler = origin.length > 0 ? cors({ origin, methods: ['POST'], allowedHeaders, exposedHeaders, maxAge: 600 }) : undefined;
  return (req, res, facts) => {
    const exchange = { req, res, facts };
    if (deps.loopbackOnly) {
      const problem = hostRefusal(req.headers.host);
      if (problem !== undefined) return sendJsonRpc(exchange, 403, refusal(problem));
    }
    // The answer writes its own failures (`fault`): what could still escape it is a response that cannot be written.
    const go = () => void answer(exchange).catch(() => res.destroy());
    if (!corsHandler) return go();
    // A preflight is answered by the cors package, header by header.
    setMcpHeaders(exchange);
    corsHandler(req, res, (err?: unknown) => (err ? fault(exchange, err) : go()));
  };
}
