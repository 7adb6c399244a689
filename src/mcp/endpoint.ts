/**
 * POST /mcp: the Model Context Protocol over Streamable HTTP (@modelcontextprotocol/sdk), stateless
 * and answering JSON, with one tool per operation that needs a key (generated/mcp-tools.ts).
 *
 *   1. Host       bound to loopback (HOST): the Host must name loopback (the SDK's DNS-rebinding middleware)
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
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { localhostHostValidation } from '@modelcontextprotocol/sdk/server/middleware/hostHeaderValidation.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import cors from 'cors';
import { type Request, type RequestHandler, type Response, Router } from 'express';
import type { McpTool } from '../contract/mcpTools';
import { type AuthenticatedKey, type Authenticator, holdsScopes, insufficientScope, unauthorizedError } from '../http/auth';
import { readJsonBody, streamedBody } from '../http/body';
import { HttpError, invalidField, toHttpError } from '../http/errors';
import type { InProcessDoor } from '../http/inProcessDoor';
import { sendError } from '../http/reply';
import type { Metrics } from '../ops/metrics';
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

/** What the request's handling learned, for the log line (RequestFacts.mcpTool). */
const recordTool = (res: Response, name: string) => {
  res.locals.mcpTool = res.locals.mcpTool === undefined ? name : `${res.locals.mcpTool},${name}`;
};

/** A JSON-RPC message's text as the answer, written as the SDK's transport writes one (encoded once, its headers in one call). */
function sendJsonRpc(res: Response, status: number, text: string): void {
  const bytes = Buffer.from(text);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': String(bytes.length) }).end(bytes);
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
const callId = (res: Response, tool: McpTool) => `${res.locals.requestId.slice(0, 123 - tool.name.length)}:mcp:${tool.name}`;

/** 7. One call of a tool the key may use: its operation's request answered in process, traced and counted. */
async function callTool(deps: McpDeps, req: Request, res: Response, key: AuthenticatedKey, tool: McpTool, args: Record<string, unknown>) {
  recordTool(res, tool.name);
  const run = async () => {
    const made = requestOf(tool, args, { host: req.headers.host, requestId: callId(res, tool), caller: key });
    return 'refused' in made ? resultFrom(made.refused) : resultOf(tool, await deps.call(made.request));
  };
  const result = await deps.traced(`mcp tool ${tool.name}`, run);
  deps.metrics.mcpToolCall(tool.name, result.isError ? 'error' : 'ok');
  return result;
}

/** 7. The SDK's server for one request: the tools the key may call, each call run through the API. */
function serverFor(deps: McpDeps, validator: AjvJsonSchemaValidator, req: Request, res: Response, key: AuthenticatedKey): Server {
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
    return callTool(deps, req, res, key, tool, request.params.arguments ?? {}).then((result) => result.value());
  });
  return server;
}

/** Steps 2 to 7 for one request to /mcp. */
function answer(deps: McpDeps, tools: ReadonlyMap<string, McpTool>): RequestHandler {
  // One validator for every request's server: the SDK would make an Ajv instance per server otherwise.
  const validator = new AjvJsonSchemaValidator();
  return async (req, res) => {
    res.locals.route = MCP_PATH;
    res.setHeader('Cache-Control', 'no-store');
    try {
      const origin = req.headers.origin;
      if (origin !== undefined && !deps.allowedOrigins.includes(origin)) {
        const message = `Origin ${JSON.stringify(origin.slice(0, 200))} may not call /mcp: list it in CORS_ORIGINS`;
        return sendJsonRpc(res, 403, JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
      }
      if (req.method === 'OPTIONS') return void res.status(204).setHeader('Allow', 'POST, OPTIONS').end();
      const notAllowed = `${req.method} is not allowed on /mcp (stateless: POST only); allowed: POST, OPTIONS`;
      if (req.method !== 'POST') throw new HttpError(405, 'method_not_allowed', notAllowed, { Allow: 'POST, OPTIONS' });
      const auth = deps.authenticate(req.headers, req.rawHeaders);
      if (!auth.ok) {
        res.locals.keyId = auth.keyId;
        throw unauthorizedError(auth);
      }
      res.locals.keyId = auth.key.keyId;
      res.locals.client = auth.key.client;
      const decoded = await readJsonBody(req.headers, streamedBody(req), ['application/json']);
      const detail = 'The body must be a JSON-RPC message (a JSON object) or a batch of them';
      if (decoded?.value === undefined || typeof decoded.value !== 'object' || decoded.value === null)
        throw invalidField('malformed_json', { in: 'body', pointer: '', rule: 'type', detail });
      const forbidden = forbiddenCall(decoded.value, tools, auth.key);
      if (forbidden) throw insufficientScope(forbidden.name, forbidden.scopes[0] ?? []);
      // The call agents make most, answered as the SDK's transport would answer it in JSON mode, without it.
      const plain = plainToolCall(req.headers, decoded.value, tools);
      if (plain) {
        const result = await callTool(deps, req, res, auth.key, plain.tool, plain.arguments);
        return sendJsonRpc(res, 200, `{"jsonrpc":"2.0","id":${JSON.stringify(plain.id)},"result":${result.json()}}`);
      }
      const server = serverFor(deps, validator, req, res, auth.key);
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on('close', () => void server.close());
      await server.connect(transport);
      await transport.handleRequest(req, res, decoded.value);
    } catch (err) {
      if (res.headersSent) return void res.destroy();
      sendError(res, toHttpError(err));
    }
  };
}

/** The router of /mcp (mounted by createApp when MCP_ENABLED=true), ahead of the API's CORS. */
export function mcpRouter(deps: McpDeps): Router {
  const tools = new Map(deps.tools.map((t) => [t.name, t]));
  const router = Router({ caseSensitive: true, strict: true });
  if (deps.loopbackOnly) router.use(MCP_PATH, localhostHostValidation());
  const allowedHeaders = ['Authorization', 'Content-Type', 'Accept', 'Mcp-Protocol-Version', 'Mcp-Session-Id', 'Last-Event-ID'];
  const exposedHeaders = ['Mcp-Session-Id', 'WWW-Authenticate', 'X-Request-Id', 'Retry-After'];
  const origin = [...deps.allowedOrigins];
  if (origin.length > 0) router.use(MCP_PATH, cors({ origin, methods: ['POST'], allowedHeaders, exposedHeaders, maxAge: 600 }));
  router.all(MCP_PATH, answer(deps, tools));
  return router;
}
