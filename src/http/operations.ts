import type { IncomingHttpHeaders } from 'node:http';
import type OpenAPIBackend from 'openapi-backend';
import type { HandlerMap, Input, OperationId, Reply } from '../contract/handlers';
import type { OperationFacts, Spec } from '../contract/spec';

/** What openapi-backend is given of a request: the body once it is decoded, as a value. */
export interface LibraryRequest {
  method: string;
  path: string;
  query: Record<string, unknown>;
  headers: IncomingHttpHeaders;
  body?: unknown;
}

/** One operation as the pipeline runs it, compiled at start-up. */
export interface Route {
  facts: OperationFacts;
  handler: (input: Input<OperationId>) => Promise<Reply<OperationId>>;
  /** Its security asks for a key (a requirement with no scheme in it, `{}`, makes the key optional). */
  needsKey: boolean;
  /** The header parameters the spec declares, by the names it gives them (Node gives them in lower case). */
  headerParams: (headers: IncomingHttpHeaders) => Record<string, unknown>;
  /** Its path templates with integer path parameters, as patterns capturing those parameters' raw text. */
  integerPathPatterns: Map<string, { pattern: RegExp; names: string[] }>;
}

const escapeRegExp = (literal: string) => literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `/v1/pets/{petId}` → /^\/v1\/pets\/([^/]+)\/*$/ and ['petId']: segments as the library's router matches them. */
function templatePattern(template: string): { pattern: RegExp; names: string[] } {
  const names = [...template.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] as string);
  const source = template
    .split(/\{[^}]+\}/)
    .map(escapeRegExp)
    .join('([^/]+)');
  return { pattern: new RegExp(`^${source}/*$`), names };
}

/** Every operation of the spec with its handler, keyed by operationId. */
export function compileRoutes(spec: Spec, backend: OpenAPIBackend, handlers: HandlerMap): Map<string, Route> {
  const routes = new Map<string, Route>();
  for (const facts of spec.operations.values()) {
    const security = backend.getOperation(facts.operationId)?.security ?? [];
    const names = facts.headerParams.map((name) => [name, name.toLowerCase()] as const);
    const integerPath = facts.integerParams.some((p) => p.in === 'path');
    routes.set(facts.operationId, {
      facts,
      handler: handlers[facts.operationId as OperationId] as Route['handler'],
      needsKey: security.length > 0 && !security.some((requirement) => Object.keys(requirement).length === 0),
      headerParams: (headers) => {
        const header: Record<string, unknown> = {};
        for (const [name, lower] of names) if (headers[lower] !== undefined) header[name] = headers[lower];
        return header;
      },
      integerPathPatterns: new Map(integerPath ? facts.fullPaths.map((template) => [template, templatePattern(template)]) : []),
    });
  }
  return routes;
}

/**
 * The raw text of a request's integer path parameters, percent-decoded as the library decodes
 * them (ajv's coercion has turned its copy into numbers by the time validation is done). Empty
 * for an operation without integer path parameters.
 */
export function pathParamsOf(route: Route, template: string, path: string): Record<string, unknown> {
  const compiled = route.integerPathPatterns.get(template);
  const values = compiled && compiled.pattern.exec(path);
  if (!compiled || !values) return {};
  const params: Record<string, unknown> = {};
  compiled.names.forEach((name, i) => {
    const text = values[i + 1] as string;
    try {
      params[name] = decodeURIComponent(text);
    } catch {
      params[name] = text;
    }
  });
  return params;
}
