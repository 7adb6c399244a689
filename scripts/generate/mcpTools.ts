/**
 * generated/mcp-tools.ts: one MCP tool per operation the bearer scheme secures, derived from the
 * spec alone (src/contract/mcpTools.ts says what a tool holds). The input schema is the
 * operation's parameters (a header's in camelCase) and its JSON body as `body`, with their bounds;
 * the output schema is the success response: its status, its documented headers and its body,
 * and for a paged list `next`, the arguments of the next page.
 */
import type { OpenAPIV3 } from 'openapi-types';
import { BODY_ARGUMENT, type JsonSchema, type McpTool, type ToolArgument, headerArgument, isTool } from '../../src/contract/mcpTools';
import { type OperationFacts, type Spec, resolve } from '../../src/contract/spec';

type Doc = OpenAPIV3.Document;

/** Keywords OpenAPI adds to JSON Schema, and formats JSON Schema validators do not know: an MCP client's validator is given neither. */
const OPENAPI_ONLY = new Set(['example', 'xml', 'externalDocs', 'discriminator', 'nullable']);
const OPENAPI_FORMATS = new Set(['int32', 'int64', 'float', 'double']);

/** A schema with every `$ref` replaced by what it points at, and no OpenAPI-only keyword. */
function inline(doc: Doc, schema: unknown, depth = 0): unknown {
  if (depth > 32) throw new Error('A schema of the spec nests deeper than 32 levels (or refers to itself): it cannot be inlined for MCP');
  if (Array.isArray(schema)) return schema.map((s) => inline(doc, s, depth + 1));
  if (typeof schema !== 'object' || schema === null) return schema;
  const resolved = resolve(doc, schema as Record<string, unknown>);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(resolved)) {
    if (OPENAPI_ONLY.has(key) || key.startsWith('x-')) continue;
    if (key === 'format' && typeof value === 'string' && OPENAPI_FORMATS.has(value)) continue;
    // `properties` and `patternProperties` hold names, not keywords.
    out[key] =
      key === 'properties' || key === 'patternProperties'
        ? Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, inline(doc, v, depth + 1)]))
        : inline(doc, value, depth + 1);
  }
  return out;
}

const text = (s: string | undefined) => (s ?? '').trim();

/** The successor's tool, the deprecation date and the sunset, first, then the summary and the description. */
function descriptionOf(op: OpenAPIV3.OperationObject): string {
  const ext = op as unknown as Record<string, string | undefined>;
  const notice = op.deprecated
    ? [
        `Deprecated${ext['x-deprecated-since'] ? ` since ${ext['x-deprecated-since']}` : ''}` +
          `${ext['x-sunset'] ? `, removed on ${ext['x-sunset']}` : ''}` +
          `${ext['x-successor'] ? `: use the tool ${ext['x-successor']} instead` : ''}.`,
      ]
    : [];
  return [...notice, text(op.summary), text(op.description)].filter(Boolean).join('\n\n');
}

function inputOf(doc: Doc, facts: OperationFacts, op: OpenAPIV3.OperationObject, params: OpenAPIV3.ParameterObject[]) {
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  const args: ToolArgument[] = [];
  for (const p of params) {
    if (p.in === 'cookie') throw new Error(`${facts.operationId}: cookie parameters have no MCP argument`);
    const argument = p.in === 'header' ? headerArgument(p.name) : p.name;
    if (argument in properties || argument === BODY_ARGUMENT)
      throw new Error(`${facts.operationId}: two parameters (or a parameter and the body) would both be the MCP argument ${argument}`);
    properties[argument] = { ...(inline(doc, p.schema) as JsonSchema), ...(p.description ? { description: text(p.description) } : {}) };
    if (p.required) required.push(argument);
    args.push({ argument, in: p.in as ToolArgument['in'], name: p.name });
  }
  const body = op.requestBody ? resolve(doc, op.requestBody) : undefined;
  const json = body?.content['application/json'];
  if (body && json?.schema) {
    properties[BODY_ARGUMENT] = {
      ...(inline(doc, json.schema) as JsonSchema),
      description: text(body.description) || 'The request body, a JSON value as the operation takes it.',
    };
    if (body.required) required.push(BODY_ARGUMENT);
  }
  const schema = { type: 'object' as const, properties, ...(required.length ? { required } : {}), additionalProperties: false };
  return { schema, args, body: body && json ? BODY_ARGUMENT : undefined };
}

function outputOf(doc: Doc, op: OpenAPIV3.OperationObject, input: JsonSchema) {
  const successes = Object.keys(op.responses)
    .filter((s) => /^2\d\d$/.test(s) || s === '304')
    .map(Number);
  const responses = successes.map((s) => resolve(doc, op.responses[String(s)] as OpenAPIV3.ResponseObject));
  const bodies = responses.flatMap((r) =>
    r.content?.['application/json']?.schema ? [inline(doc, r.content['application/json'].schema)] : [],
  );
  const headers: Record<string, unknown> = {};
  for (const r of responses)
    for (const [name, h] of Object.entries(r.headers ?? {})) {
      if (name.toLowerCase().startsWith('access-control-')) continue;
      const header = resolve(doc, h);
      headers[name] = {
        ...(inline(doc, header.schema) as JsonSchema),
        ...(header.description ? { description: text(header.description) } : {}),
      };
    }
  const link = Object.entries(responses[0]?.headers ?? {}).find(([n]) => n.toLowerCase() === 'link');
  const pages = link !== undefined && JSON.stringify(resolve(doc, link[1]).schema ?? {}).includes('rel=\\"next\\"');
  const uniqueBodies = [...new Map(bodies.map((b) => [JSON.stringify(b), b])).values()];
  const properties: Record<string, unknown> = {
    status: { type: 'integer', enum: successes, description: "The HTTP status of the operation's answer." },
    headers: { type: 'object', properties: headers, additionalProperties: false, description: 'The response headers the spec documents.' },
  };
  if (uniqueBodies.length === 1) properties.body = uniqueBodies[0];
  else if (uniqueBodies.length > 1) properties.body = { anyOf: uniqueBodies };
  if (pages) properties.next = { ...input, description: "This tool's arguments for the next page; absent on the last page." };
  return {
    schema: { type: 'object' as const, properties, required: ['status', 'headers'], additionalProperties: false },
    successes,
    pages,
  };
}

/** The tools, in the spec's order of operations: those under the API root that need a key. */
export function mcpToolsOf(spec: Spec): McpTool[] {
  const doc = spec.document;
  return [...spec.operations.values()]
    .filter((facts) => isTool(spec, facts))
    .map((facts) => {
      const item = doc.paths[facts.path] as OpenAPIV3.PathItemObject;
      const op = item[facts.method.toLowerCase() as OpenAPIV3.HttpMethods] as OpenAPIV3.OperationObject;
      const params = [...(item.parameters ?? []), ...(op.parameters ?? [])].map((p) => resolve(doc, p));
      const input = inputOf(doc, facts, op, params);
      const output = outputOf(doc, op, input.schema);
      const safe = facts.method === 'GET' || facts.method === 'HEAD';
      const title = text(op.summary) || facts.operationId;
      return {
        name: facts.operationId,
        title,
        description: descriptionOf(op),
        inputSchema: input.schema,
        outputSchema: output.schema,
        annotations: {
          title,
          readOnlyHint: safe,
          destructiveHint: facts.method === 'DELETE' || facts.method === 'PUT',
          idempotentHint: safe || facts.method === 'PUT' || facts.method === 'DELETE',
          openWorldHint: false,
        },
        call: {
          method: facts.method,
          path: facts.fullPath,
          arguments: input.args,
          body: input.body,
          successes: output.successes,
          pages: output.pages,
        },
        scopes: facts.scopes,
      };
    });
}

/** The file: the tools as a typed constant. */
export function mcpToolsFile(spec: Spec): string {
  return [
    '/**',
    ' * The MCP tools, written by `npm run generate` from the operations of spec/ that need a key: do not',
    ' * edit. One per operation (scripts/generate/mcpTools.ts says how each is derived); /mcp serves them',
    ' * (src/mcp/), each to a key whose scopes allow its operation.',
    ' */',
    "import type { McpTool } from '../src/contract/mcpTools';",
    '',
    `export const mcpTools: readonly McpTool[] = ${JSON.stringify(mcpToolsOf(spec), null, 2)};`,
    '',
  ].join('\n');
}
