import type { IncomingHttpHeaders } from 'node:http';
import type OpenAPIBackend from 'openapi-backend';
import type { HandlerMap, Input, OperationId, Reply } from '../contract/handlers';
import type { OperationFacts, Spec } from '../contract/spec';

/** What openapi-backend is given of a request: the body once it is decoded, as a value. */
export interface SpecRequest {
  method: string;
  path: string;
  query: Record<string, unknown>;
  headers: IncomingHttpHeaders;
  body?: unknown;
}

/** One operation as the request core runs it, compiled at start-up. */
export interface Route {
  facts: OperationFacts;
  handler: (input: Input<OperationId>) => Promise<Reply<OperationId>>;
  /** Its security asks for a key (a requirement with no scheme in it, `{}`, makes the key optional). */
  needsKey: boolean;
  /** The header parameters the spec declares, by the names it gives them (Node gives them in lower case). */
  headerParams: (headers: IncomingHttpHeaders) => Record<string, unknown>;
  /** It has path parameters declared `type: integer`, whose raw text must be plain decimal digits. */
  integerPathParams: boolean;
  /** The name of its handler's span with tracing on (`handler <operationId>`), made once. */
  handlerSpan: string;
}

/** Every operation of the spec with its handler, keyed by operationId. */
export function compileRoutes(spec: Spec, backend: OpenAPIBackend, handlers: HandlerMap): Map<string, Route> {
  const routes = new Map<string, Route>();
  for (const facts of spec.operations.values()) {
    const security = backend.getOperation(facts.operationId)?.security ?? [];
    const names = facts.headerParams.map((name) => [name, name.toLowerCase()] as const);
    routes.set(facts.operationId, {
      facts,
      handler: handlers[facts.operationId as OperationId] as Route['handler'],
      needsKey: security.length > 0 && !security.some((requirement) => Object.keys(requirement).length === 0),
      handlerSpan: `handler ${facts.operationId}`,
      headerParams: (headers) => {
        const header: Record<string, unknown> = {};
        for (const [name, lower] of names) if (headers[lower] !== undefined) header[name] = headers[lower];
        return header;
      },
      integerPathParams: facts.integerParams.some((p) => p.in === 'path'),
    });
  }
  return routes;
}
