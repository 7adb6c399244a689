import { readFileSync } from 'node:fs';
import type { OpenAPIV3 } from 'openapi-types';
import { parse } from 'yaml';
import { specPath } from './paths';

/** What the server needs to know about one operation, read from the spec once at start-up. */
export interface OperationFacts {
  operationId: string;
  method: string;
  /** Path template as the spec writes it, relative to its servers, e.g. `/pets/{petId}`. */
  path: string;
  /** The same on this server: with its base path, e.g. `/v1/pets/{petId}` or `/healthz`. */
  fullPath: string;
  /** Query and path parameters declared `type: integer`: their raw text must be a plain decimal integer. */
  integerParams: { in: 'query' | 'path'; name: string }[];
  /** Header parameters, by the name the spec gives them (e.g. `Idempotency-Key`). */
  headerParams: string[];
  /** Media types the request body may be sent as; empty when the operation takes no body. */
  requestMediaTypes: string[];
  /** RFC 9745 / RFC 8594 headers for a deprecated operation; empty otherwise. */
  deprecationHeaders: Record<string, string>;
}

export interface Spec {
  /** The document exactly as written in spec/openapi.yaml. */
  yamlText: string;
  document: OpenAPIV3.Document;
  /** The path every top-level server URL ends in, e.g. `/v1`. */
  apiRoot: string;
  operations: Map<string, OperationFacts>;
  /** Each path template with its operations by method and the `Allow` list for 405. */
  routes: Route[];
  /**
   * The document as routed here: every path written out with its base path (`/v1/pets`,
   * `/healthz`), since a path may name its own servers (the probes live outside /v1).
   */
  routingDocument: OpenAPIV3.Document;
}

/** True for paths at or below the API root, where every request needs a key. */
export function underApiRoot(spec: Spec, path: string): boolean {
  return spec.apiRoot === '/' || path === spec.apiRoot || path.startsWith(`${spec.apiRoot}/`);
}

export interface Route {
  /** The path template on this server, e.g. `/v1/pets/{petId}`. */
  template: string;
  pattern: RegExp;
  allow: string[];
  byMethod: Map<string, OperationFacts>;
}

/** The route a request path falls under, if any. */
export function findRoute(spec: Spec, path: string): Route | undefined {
  return spec.routes.find((r) => r.pattern.test(path));
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

function isRef(x: unknown): x is OpenAPIV3.ReferenceObject {
  return typeof x === 'object' && x !== null && '$ref' in x;
}

function resolve<T>(doc: OpenAPIV3.Document, x: T | OpenAPIV3.ReferenceObject): T {
  let value: unknown = x;
  for (let hops = 0; isRef(value); hops++) {
    if (hops > 20 || !value.$ref.startsWith('#/')) throw new Error(`Cannot resolve ${value.$ref}`);
    value = value.$ref
      .slice(2)
      .split('/')
      .reduce<unknown>((node, key) => (node as Record<string, unknown>)?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
    if (value === undefined) throw new Error(`Unresolvable $ref in spec`);
  }
  return value as T;
}

function basePathOf(servers: OpenAPIV3.ServerObject[] | undefined, where: string): string {
  const roots = new Set((servers ?? []).map((s) => new URL(s.url, 'http://placeholder').pathname.replace(/\/+$/, '')));
  if (roots.size !== 1) throw new Error(`Every server URL of ${where} must end in the same path; found ${[...roots].join(', ') || 'none'}`);
  return [...roots][0] || '/';
}

const join = (base: string, path: string) => (base === '/' ? path : `${base}${path}`);

function isoDateToEpoch(date: unknown, what: string): number {
  if (typeof date !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(date)) throw new Error(`${what} must be a date YYYY-MM-DD`);
  return Date.parse(`${date}T00:00:00Z`) / 1000;
}

function deprecationHeaders(op: OpenAPIV3.OperationObject, all: Map<string, OperationFacts>): Record<string, string> {
  if (!op.deprecated) return {};
  const ext = op as Record<string, unknown>;
  const name = op.operationId ?? '?';
  const headers: Record<string, string> = {
    Deprecation: `@${isoDateToEpoch(ext['x-deprecated-since'], `${name}: x-deprecated-since`)}`,
  };
  if (ext['x-sunset'] !== undefined) {
    headers.Sunset = new Date(isoDateToEpoch(ext['x-sunset'], `${name}: x-sunset`) * 1000).toUTCString();
  }
  if (ext['x-successor'] !== undefined) {
    const successor = all.get(String(ext['x-successor']));
    if (!successor) throw new Error(`${name}: x-successor names no operation: ${String(ext['x-successor'])}`);
    headers.Link = `<${successor.fullPath}>; rel="successor-version"`;
  }
  return headers;
}

function templateToPattern(template: string): RegExp {
  const escaped = template
    .split(/\{[^}]+\}/)
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('[^/]+');
  return new RegExp(`^${escaped}/?$`);
}

/** Reads spec/openapi.yaml and derives, once, everything the server takes from it. */
export function loadSpec(file = specPath): Spec {
  const yamlText = readFileSync(file, 'utf8');
  const document = parse(yamlText) as OpenAPIV3.Document;
  const apiRoot = basePathOf(document.servers, 'the spec');
  const routingDocument: OpenAPIV3.Document = { ...structuredClone(document), servers: [{ url: '/' }], paths: {} };
  const operations = new Map<string, OperationFacts>();
  const routes: Route[] = [];
  const deprecated: [OperationFacts, OpenAPIV3.OperationObject][] = [];

  for (const [path, item] of Object.entries(document.paths ?? {})) {
    if (!item) continue;
    const fullPath = join(item.servers ? basePathOf(item.servers, path) : apiRoot, path);
    const { servers: _servers, ...routed } = structuredClone(item);
    routingDocument.paths[fullPath] = routed;
    const methods: string[] = [];
    const byMethod = new Map<string, OperationFacts>();
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      methods.push(method.toUpperCase());
      if (!op.operationId) throw new Error(`${method.toUpperCase()} ${path} has no operationId`);
      const params = [...(item.parameters ?? []), ...(op.parameters ?? [])].map((p) => resolve(document, p));
      const integerParams = params
        .filter((p) => (p.in === 'query' || p.in === 'path') && p.schema && resolve(document, p.schema).type === 'integer')
        .map((p) => ({ in: p.in as 'query' | 'path', name: p.name }));
      const body = op.requestBody ? resolve(document, op.requestBody) : undefined;
      const facts: OperationFacts = {
        operationId: op.operationId,
        method: method.toUpperCase(),
        path,
        fullPath,
        integerParams,
        headerParams: params.filter((p) => p.in === 'header').map((p) => p.name),
        requestMediaTypes: body ? Object.keys(body.content) : [],
        deprecationHeaders: {},
      };
      operations.set(op.operationId, facts);
      byMethod.set(facts.method, facts);
      if (op.deprecated) deprecated.push([facts, op]);
    }
    // A server answers HEAD wherever it answers GET (RFC 9110 §9.3.2).
    if (methods.includes('GET') && !methods.includes('HEAD')) methods.splice(methods.indexOf('GET') + 1, 0, 'HEAD');
    // And OPTIONS everywhere: 204 with this list (RFC 9110 §9.3.7).
    if (!methods.includes('OPTIONS')) methods.push('OPTIONS');
    routes.push({ template: fullPath, pattern: templateToPattern(fullPath), allow: methods, byMethod });
  }
  for (const [facts, op] of deprecated) facts.deprecationHeaders = deprecationHeaders(op, operations);

  return { yamlText, document, apiRoot, operations, routes, routingDocument };
}
