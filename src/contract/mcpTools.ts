/**
 * The MCP tools as `npm run generate` derives them from the spec (generated/mcp-tools.ts): one per
 * operation the bearer scheme secures. What an MCP client is shown (name, title, description, the
 * input and output schemas, the hints), and how a call becomes the operation's HTTP request.
 */

import { type OperationFacts, type Spec, underApiRoot } from './spec';

/** JSON Schema, as the spec writes it with every `$ref` replaced by what it points at. */
export type JsonSchema = Record<string, unknown>;

/** Where one argument of a tool goes in the operation's request. */
export interface ToolArgument {
  /** The argument's name: the parameter's, or for a header its name in camelCase (`Idempotency-Key` → `idempotencyKey`). */
  argument: string;
  in: 'path' | 'query' | 'header';
  /** The parameter's name in the spec (a header's as the spec spells it). */
  name: string;
}

export interface McpTool {
  /** The operationId. */
  name: string;
  /** The operation's summary. */
  title: string;
  /** The summary and the description; a deprecated operation's says so first, and names its successor. */
  description: string;
  inputSchema: JsonSchema & { type: 'object' };
  outputSchema: JsonSchema & { type: 'object' };
  annotations: { title: string; readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint: boolean };
  /** The operation a call runs: its method, its path on this server (`/v1/pets/{petId}`), and where each argument goes. */
  call: {
    method: string;
    path: string;
    arguments: ToolArgument[];
    /** The argument holding the JSON request body (`body`), when the operation takes one. */
    body?: string;
    /** The success statuses the spec documents (2xx, and 304 where documented). */
    successes: number[];
    /** The response documents `Link` with `rel="next"`: the result carries `next`, this tool's arguments for the next page. */
    pages: boolean;
  };
  /** The scopes a key needs, one list per requirement (OperationFacts.scopes). */
  scopes: string[][];
}

/** A header parameter's argument name: camelCase of its words (`Idempotency-Key` → `idempotencyKey`). */
export const headerArgument = (header: string): string =>
  header
    .split('-')
    .map((word, i) => (i === 0 ? word.toLowerCase() : `${word.charAt(0).toUpperCase()}${word.slice(1).toLowerCase()}`))
    .join('');

/** The argument that carries a request body. */
export const BODY_ARGUMENT = 'body';

/** An operation is a tool when it is under the API root and needs a key (the probes are neither): the one rule, for generate and start-up. */
export const isTool = (spec: Pick<Spec, 'apiRoot'>, op: Pick<OperationFacts, 'scopes' | 'fullPath'>): boolean =>
  op.scopes.length > 0 && underApiRoot(spec, op.fullPath);

/** Fails, naming them, when generated/mcp-tools.ts and the spec's operations disagree (it is stale: run `npm run generate`). */
export function checkToolsMatchSpec(tools: readonly McpTool[], secured: Iterable<string>): void {
  const names = new Set(tools.map((t) => t.name));
  const ids = new Set(secured);
  const missing = [...ids].filter((id) => !names.has(id));
  const extra = [...names].filter((n) => !ids.has(n));
  if (missing.length || extra.length)
    throw new Error(
      `generated/mcp-tools.ts is stale for the spec (run \`npm run generate\`): ${[
        ...missing.map((id) => `operation ${id} has no tool`),
        ...extra.map((n) => `tool ${n} names no secured operation`),
      ].join('; ')}`,
    );
}
