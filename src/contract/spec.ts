import type { OpenAPIV3 } from 'openapi-types';
import { type Document, isMap, isScalar, isSeq, visit } from 'yaml';
import { specPath } from '../paths';
import { basePathOfUrl } from './basePath';
import { bundleSpec } from './bundle';
import { METHODS } from './methods';

/** The top-level JSON type a request body must have: an object or an array (see bodyTypeOf). */
export interface BodyType {
  type: 'object' | 'array';
  nullable: boolean;
}

/** What the server needs to know about one operation, read from the spec once at start-up. */
export interface OperationFacts {
  operationId: string;
  method: string;
  /** Path template as the spec writes it, relative to its servers, e.g. `/pets/{petId}`. */
  path: string;
  /** The same on this server: with its base path, e.g. `/v1/pets/{petId}` or `/healthz`. */
  fullPath: string;
  /**
   * Every path it is served at, fullPath first: one per base path of its servers (the probes'
   * list the root of the host and the API root, so they are at `/healthz` and `/v1/healthz`).
   */
  fullPaths: string[];
  /** Query and path parameters declared `type: integer`: their raw text must be a plain decimal integer. */
  integerParams: { in: 'query' | 'path'; name: string }[];
  /** Header parameters, by the name the spec gives them (e.g. `Idempotency-Key`). */
  headerParams: string[];
  /** Media types the request body may be sent as; empty when the operation takes no body. */
  requestMediaTypes: string[];
  /** What the decoded JSON body must be at its top level, when the operation takes one. */
  requestBodyType: BodyType | undefined;
  /** RFC 9745 / RFC 8594 headers for a deprecated operation; empty otherwise. */
  deprecationHeaders: Record<string, string>;
  /** A GET whose responses document 304: its 200s carry an ETag, and `If-None-Match` is answered (RFC 9110 §13.1.2). */
  conditional: boolean;
  /**
   * The scopes a key needs, one list per requirement of the operation's security that names
   * the bearer scheme (its role names, OpenAPI 3.1): a key may call the operation when it holds
   * every scope of one of them. Empty when no requirement names the scheme (a keyless operation).
   */
  scopes: string[][];
}

export interface Spec {
  /** The document as written: the file's text, or the bundle of a split spec. */
  yamlText: string;
  /**
   * What is published (/openapi.yaml, /openapi.json, the reference page): the document without
   * the servers marked `x-internal: true` (staging, local development), as YAML keeping the
   * file's comments and layout, and as a value.
   */
  publicYamlText: string;
  publicDocument: OpenAPIV3.Document;
  /** The files the spec was read from, spec/openapi.yaml first. */
  files: string[];
  document: OpenAPIV3.Document;
  /** The path every top-level server URL ends in, e.g. `/v1`. */
  apiRoot: string;
  /** Every scope an operation names, sorted: what a key may hold (a bootstrap key, API_KEYS, holds them all). */
  scopes: string[];
  operations: Map<string, OperationFacts>;
  /**
   * Paths under the API root where an operation needs no key (`security: []`): they are
   * matched before the key is asked for. Everywhere else under the API root the key comes first.
   */
  keylessPaths: Set<string>;
  /**
   * The document as routed here: every path written out with each of its base paths (`/v1/pets`,
   * `/healthz`, `/v1/healthz`), since a path may name its own servers (the probes' are the root
   * of the host and the API root).
   */
  routingDocument: OpenAPIV3.Document;
}

/** True for paths at or below the API root. */
export function underApiRoot(spec: Pick<Spec, 'apiRoot'>, path: string): boolean {
  return spec.apiRoot === '/' || path === spec.apiRoot || path.startsWith(`${spec.apiRoot}/`);
}

/** True where a request needs a valid key before anything else is looked at: under the API root, but for its keyless paths. */
export function keyFirst(spec: Spec, path: string): boolean {
  return underApiRoot(spec, path) && !spec.keylessPaths.has(path);
}

function isRef(x: unknown): x is OpenAPIV3.ReferenceObject {
  return typeof x === 'object' && x !== null && '$ref' in x;
}

/** Follows internal `$ref`s (`#/components/…`) to what they point at. */
export function resolve<T>(doc: OpenAPIV3.Document, x: T | OpenAPIV3.ReferenceObject): T {
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
  const roots = new Set((servers ?? []).map((s) => basePathOfUrl(s.url)));
  if (roots.size !== 1) throw new Error(`Every server URL of ${where} must end in the same path; found ${[...roots].join(', ') || 'none'}`);
  return [...roots][0] || '/';
}

/** The base paths a path item's own servers end in, each once, in the order first listed (`''` is the root). */
const basePathsOf = (servers: OpenAPIV3.ServerObject[]): string[] => [...new Set(servers.map((s) => basePathOfUrl(s.url) || '/'))];

/** The bearer scheme's name in the spec's security schemes: the one the service checks keys for. */
const BEARER_SCHEME = 'bearerAuth';

/** The role names each requirement of the operation's security gives the bearer scheme (OperationFacts.scopes). */
function scopesOf(doc: OpenAPIV3.Document, op: OpenAPIV3.OperationObject): string[][] {
  return (op.security ?? doc.security ?? []).filter((r) => BEARER_SCHEME in r).map((r) => [...(r[BEARER_SCHEME] ?? [])]);
}

/** An operation needs no key when its security (or the document's) is empty, or lists the empty requirement `{}`. */
function keyless(doc: OpenAPIV3.Document, op: OpenAPIV3.OperationObject): boolean {
  const security = op.security ?? doc.security ?? [];
  return security.length === 0 || security.some((requirement) => Object.keys(requirement).length === 0);
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
  const successorId = ext['x-successor'];
  if (successorId !== undefined) {
    const successor = typeof successorId === 'string' ? all.get(successorId) : undefined;
    if (!successor) throw new Error(`${name}: x-successor names no operation: ${JSON.stringify(successorId)}`);
    headers.Link = `<${successor.fullPath}>; rel="successor-version"`;
  }
  // RFC 9745 §3: where the deprecation is explained. The operation's entry on the service's reference
  // page (/docs/, Swagger UI's deep link #/<tag>/<operationId>), whose description says how to migrate.
  const explained = `</docs/#/${encodeURIComponent(op.tags?.[0] ?? 'default')}/${encodeURIComponent(name)}>; rel="deprecation"`;
  headers.Link = headers.Link === undefined ? explained : `${headers.Link}, ${explained}`;
  return headers;
}

/**
 * The body is decoded once (`readJsonBody`) and handed to openapi-backend as a value. The
 * library decodes a body it is given as a string or a number once more, as JSON text, so a
 * JSON body must be a document: an object or an array, checked before the library sees it.
 */
function bodyTypeOf(doc: OpenAPIV3.Document, body: OpenAPIV3.RequestBodyObject | undefined, where: string): BodyType | undefined {
  const json = body?.content['application/json'];
  if (!json) return undefined;
  const schema = json.schema ? resolve(doc, json.schema) : undefined;
  if (schema?.type !== 'object' && schema?.type !== 'array') {
    throw new Error(
      `${where}: the application/json request body schema must declare type: object or type: array (a JSON document), got ${schema?.type ?? 'no type'}`,
    );
  }
  return { type: schema.type, nullable: schema.nullable === true };
}

/**
 * The document without the servers marked `x-internal: true`, wherever a `servers` list stands (an
 * anchored list once, for each alias), as YAML text keeping the file's comments, and as a value.
 */
function withoutInternalServers(yaml: Document): { text: string; document: OpenAPIV3.Document } {
  const doc = yaml.clone();
  visit(doc, {
    Pair(_, pair) {
      if (!isScalar(pair.key) || pair.key.value !== 'servers' || !isSeq(pair.value)) return;
      const list = pair.value;
      list.items = list.items.filter((server) => !(isMap(server) && server.get('x-internal') === true));
    },
  });
  return { text: doc.toString({ lineWidth: 0 }), document: doc.toJS() as OpenAPIV3.Document };
}

/** Reads spec/openapi.yaml (and the files it refers to, bundled) and derives, once, everything the server takes from it. */
export async function loadSpec(file = specPath): Promise<Spec> {
  const bundle = await bundleSpec(file);
  const { yamlText, files } = bundle;
  const { document } = bundle;
  const apiRoot = basePathOf(document.servers, 'the spec');
  // What is served: the paths (the webhooks are what this service sends, and openapi-backend, which
  // reads OpenAPI 3.0, refuses a document that has them).
  const { webhooks: _webhooks, ...served } = structuredClone(document) as OpenAPIV3.Document & { webhooks?: unknown };
  const routingDocument: OpenAPIV3.Document = { ...served, servers: [{ url: '/' }], paths: {} };
  const operations = new Map<string, OperationFacts>();
  const keylessPaths = new Set<string>();
  const deprecated: [OperationFacts, OpenAPIV3.OperationObject][] = [];

  for (const [path, item] of Object.entries(document.paths ?? {})) {
    if (!item) continue;
    const fullPaths = (item.servers?.length ? basePathsOf(item.servers) : [apiRoot]).map((base) => join(base, path));
    const [fullPath = path] = fullPaths;
    const { servers: _servers, ...routed } = item;
    // The same path item at each of its base paths: the library routes each to the one operation.
    for (const at of fullPaths) routingDocument.paths[at] = structuredClone(routed);
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
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
        fullPaths,
        integerParams,
        headerParams: params.filter((p) => p.in === 'header').map((p) => p.name),
        requestMediaTypes: body ? Object.keys(body.content) : [],
        requestBodyType: bodyTypeOf(document, body, `${method.toUpperCase()} ${path}`),
        deprecationHeaders: {},
        conditional: method === 'get' && op.responses?.['304'] !== undefined,
        scopes: keyless(document, op) ? [] : scopesOf(document, op),
      };
      operations.set(op.operationId, facts);
      if (op.deprecated) deprecated.push([facts, op]);
      for (const at of fullPaths.filter((p) => underApiRoot({ apiRoot }, p))) {
        if (!keyless(document, op)) continue;
        // Only an exact path can be told apart before the request is matched, where the key is asked for.
        if (at.includes('{'))
          throw new Error(`${op.operationId}: a keyless operation under ${apiRoot} needs a path without parameters; ${at} has some`);
        keylessPaths.add(at);
      }
    }
  }
  for (const [facts, op] of deprecated) facts.deprecationHeaders = deprecationHeaders(op, operations);

  const { text: publicYamlText, document: publicDocument } = withoutInternalServers(bundle.yaml);
  const scopes = [...new Set([...operations.values()].flatMap((op) => op.scopes.flat()))].sort();
  return { yamlText, publicYamlText, publicDocument, files, document, apiRoot, scopes, operations, keylessPaths, routingDocument };
}

/** Fails, naming them, when the spec's operations and the handlers do not pair up one to one. */
export function checkHandlersMatchSpec(specOperationIds: Iterable<string>, handlerNames: Iterable<string>): void {
  const ops = new Set(specOperationIds);
  const names = new Set(handlerNames);
  const problems = [
    ...[...ops]
      .filter((id) => !names.has(id))
      .map((id) => `operation ${id} in the spec has no handler in src/handlers/ (run \`npm run generate\` to write a stub)`),
    ...[...names].filter((n) => !ops.has(n)).map((n) => `handler ${n} names no operation in the spec`),
  ];
  if (problems.length > 0) throw new Error(`The handlers do not match spec/openapi.yaml:\n  - ${problems.join('\n  - ')}`);
}

/** The operations marked deprecated: their calls are also counted by API key, so that who still calls them is known before the sunset. */
export const deprecatedOperations = (spec: Spec): Set<string> =>
  new Set([...spec.operations.values()].filter((op) => Object.keys(op.deprecationHeaders).length > 0).map((op) => op.operationId));
