/**
 * An operation's parts as the comparisons read them: its identity and keys, its parameters'
 * serialisation and schema, its content and headers. Nothing here compares callbacks or webhooks,
 * which read these too (no import circle: operations → callbacks → webhooks → these parts).
 */
import { METHODS } from '../../src/contract/methods';
import { basePathOfUrl } from '../../src/contract/basePath';
import { STABILITY_RANK, type StabilityLevel, isStabilityLevel } from './extensions';
import { esc, type Json, ptr } from './load';
import type { Ctx } from './context';
import { compareDeprecation } from './deprecation';
import { compareRest } from './fields';
import { canonical, compareSchema } from './schema';
import type { Direction } from './rules';

export interface Operation {
  /** METHOD /path with parameter names blanked: the identity of an operation. */
  key: string;
  /** METHOD /path as written (METHOD webhook:name for a webhook). */
  label: string;
  method: string;
  /** The path, or the webhook's name. */
  name: string;
  op: Json;
  params: Map<string, { param: Json; pointer: string }>;
  pointer: string;
}

/** The fixed fields of a path item that hold an operation: OpenAPI 3.0/3.1's eight, and 3.2's `query`. */
export const OPERATION_FIELDS: readonly string[] = [...METHODS, 'query'];

/**
 * The operations a path item holds: its fixed fields (`get` … `trace`, and 3.2's `query`), each
 * under its method in capitals, and 3.2's `additionalOperations`, each under its key as written
 * (methods are case-sensitive: `QUERY` there is the `query` field's method, `Query` another one).
 */
export function operationKeysOf(item: Json): { key: string; method: string; op: unknown; additional: boolean }[] {
  const out = OPERATION_FIELDS.filter((m) => typeof item[m] === 'object' && item[m] !== null).map((m) => ({
    key: m,
    method: m.toUpperCase(),
    op: item[m] as unknown,
    additional: false,
  }));
  const more: unknown = item.additionalOperations;
  if (typeof more === 'object' && more !== null && !Array.isArray(more))
    for (const [m, op] of Object.entries(more))
      if (typeof op === 'object' && op !== null && !out.some((o) => o.method === m)) out.push({ key: m, method: m, op, additional: true });
  return out;
}

/** The operations of a document's `paths`, or of its `webhooks` (3.1), each under its method. */
export function operationsOf(doc: Json, root: 'paths' | 'webhooks' = 'paths'): Map<string, Operation> {
  return operationsOfItems(doc[root] ?? {}, root === 'paths' ? (p) => p : (name) => `webhook:${name}`, (p) => ptr(root, p));
}

/**
 * The operations of a map of path items: `at` names an item in labels (`/pets`, `webhook:name`),
 * `base` gives the JSON pointer of an item.
 */
export function operationsOfItems(
  items: Json,
  at: (name: string) => string,
  base: (name: string) => string,
  /** Paths match with their parameters' names blanked; a callback's runtime expression does not. */
  blank = true,
): Map<string, Operation> {
  const ops = new Map<string, Operation>();
  for (const [path, item] of Object.entries<Json>(items)) {
    if (typeof item !== 'object' || item === null) continue;
    for (const { key: field, method: verb, op, additional } of operationKeysOf(item)) {
      if (typeof op !== 'object' || op === null) continue;
      const method = additional ? ['additionalOperations', field] : [field];
      const params = new Map<string, { param: Json; pointer: string }>();
      const pathNames = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
      const declared: { param: Json; pointer: string }[] = [
        ...((Array.isArray(item.parameters) ? item.parameters : []) as Json[]).map((p, i) => ({
          param: p,
          pointer: `${base(path)}${ptr('parameters', i)}`,
        })),
        ...((Array.isArray((op as Json).parameters) ? (op as Json).parameters : []) as Json[]).map((p, i) => ({
          param: p,
          pointer: `${base(path)}${ptr(...method, 'parameters', i)}`,
        })),
      ];
      const positions = pathPositions(pathNames, declared);
      for (const d of declared) {
        const p = d.param;
        if (typeof p !== 'object' || p === null) continue;
        // Path parameters are matched by position: renaming {id} to {petId} changes no URL.
        const key =
          p.in === 'path'
            ? `path ${positions.get(p.name) ?? p.name}`
            : `${p.in} ${p.in === 'header' ? String(p.name).toLowerCase() : p.name}`;
        params.set(key, d); // an operation's parameter overrides the path item's
      }
      const where = at(path);
      const key = `${verb} ${blank ? where.replace(/\{[^}]+\}/g, '{}') : where}`;
      ops.set(key, {
        key,
        label: `${verb} ${where}`,
        method: verb,
        name: path,
        op: op,
        params,
        pointer: `${base(path)}${ptr(...method)}`,
      });
    }
  }
  return ops;
}

/**
 * The position (#1, #2, …) of each declared path parameter in the path template: by name, and a
 * name the template does not have (`{id}` declared as `petId`) takes the first position no
 * declared name took, so that the template and its parameter stay one parameter.
 */
function pathPositions(pathNames: (string | undefined)[], declared: { param: Json }[]): Map<unknown, string> {
  const names = declared
    .map((d) => d.param)
    .filter((p) => typeof p === 'object' && p !== null && p.in === 'path')
    .map((p) => p.name as unknown);
  const positions = new Map<unknown, string>();
  const free = pathNames.map((_, i) => i).filter((i) => !names.includes(pathNames[i]));
  for (const name of names) {
    const i = pathNames.indexOf(name as string);
    const at = i >= 0 ? i : free.shift();
    if (at !== undefined) positions.set(name, `#${at + 1}`);
  }
  return positions;
}

/** The base path every server URL of a document ends in (`/v1`). */
export function basePaths(doc: Json): string[] {
  const servers: Json[] = Array.isArray(doc.servers) ? doc.servers : [];
  return [...new Set(servers.map((s) => basePathOfUrl(String(s.url))))].sort();
}

/** How a parameter goes on the wire, with the defaults of its location written out. */
export function serialisation(p: Json): { style: string; explode: boolean; allowReserved: boolean; content?: string } {
  const style = String(p.style ?? (p.in === 'query' || p.in === 'cookie' ? 'form' : 'simple'));
  const content = p.content && typeof p.content === 'object' ? Object.keys(p.content).sort().join(', ') : undefined;
  return {
    style,
    // form (and 3.2's cookie style) explode by default
    explode: typeof p.explode === 'boolean' ? p.explode : style === 'form' || style === 'cookie',
    allowReserved: p.allowReserved === true,
    content,
  };
}

/** The schema of a parameter or header, whether written as `schema` or `content`. */
export function schemaOf(p: Json): { schema: unknown; at: string } {
  if (p.content && typeof p.content === 'object') {
    const [type] = Object.keys(p.content);
    if (type !== undefined) return { schema: (p.content as Json)[type]?.schema, at: `/content/${esc(type)}/schema` };
  }
  return { schema: p.schema, at: '/schema' };
}

/** The media types of a request body or a response. */
export function compareContent(oc: Json, nc: Json, dir: Direction, at: string, ctx: Ctx, what: string): void {
  for (const type of Object.keys(oc)) {
    const cAt = `${at}/content/${esc(type)}`;
    if (!(type in nc)) {
      ctx.push(`${dir}-content-type-removed`, cAt, `${what} no longer ${dir === 'request' ? 'accepts' : 'comes as'} ${type}`, 'old');
      continue;
    }
    const o: Json = oc[type] ?? {};
    const n: Json = nc[type] ?? {};
    if (o.schema === undefined && n.schema !== undefined)
      ctx.push(`${dir}-media-type-schema-added`, `${cAt}/schema`, `${what} ${type} now has a schema`);
    else if (o.schema !== undefined && n.schema === undefined)
      ctx.push(`${dir}-media-type-schema-removed`, cAt, `${what} ${type} no longer has a schema`);
    else if (o.schema !== undefined) compareSchema(o.schema, n.schema, dir, `${cAt}/schema`, ctx);
    // 3.2: the schema of each item of a sequential media type (JSON Lines, SSE, multipart/mixed), graded like `schema`
    if (o.itemSchema === undefined && n.itemSchema !== undefined)
      ctx.push(`${dir}-media-type-schema-added`, `${cAt}/itemSchema`, `${what} ${type} now has an itemSchema`);
    else if (o.itemSchema !== undefined && n.itemSchema === undefined)
      ctx.push(`${dir}-media-type-schema-removed`, cAt, `${what} ${type} no longer has an itemSchema`);
    else if (o.itemSchema !== undefined) compareSchema(o.itemSchema, n.itemSchema, dir, `${cAt}/itemSchema`, ctx);
    for (const key of ['encoding', 'itemEncoding', 'prefixEncoding'] as const)
      if (canonical(o[key]) !== canonical(n[key])) ctx.push(`${dir}-encoding-changed`, `${cAt}/${key}`, `${what} ${type}: ${key} changed`);
    compareRest(o, n, 'mediaType', cAt, `${what} ${type}`, ctx);
  }
  for (const type of Object.keys(nc))
    if (!(type in oc))
      ctx.push(
        `${dir}-content-type-added`,
        `${at}/content/${esc(type)}`,
        `${what} ${dir === 'request' ? 'also accepts' : 'may also come as'} ${type}`,
      );
}

/** A response's headers by their name in lower case (header names are case-insensitive), each with its name as written. */
export const headersByName = (h: Json) =>
  new Map(Object.entries(h).map(([k, v]) => [k.toLowerCase(), { name: k, header: (v ?? {}) as Json }]));

/** What an operation or a webhook is called, its deprecation, its texts and its stability level. */
export function compareIdentity(kind: 'operation' | 'webhook', o: Operation, n: Operation, ctx: Ctx): void {
  const at = n.pointer;
  if (o.op.operationId !== n.op.operationId)
    ctx.push(
      kind === 'operation' ? 'operation-id-changed' : 'webhook-operation-id-changed',
      `${at}/operationId`,
      `operationId changed from ${o.op.operationId ?? 'none'} to ${n.op.operationId ?? 'none'}: generated ${kind === 'operation' ? 'clients call it' : 'receivers name their handler'} by name`,
    );
  compareDeprecation(kind, o.op, n.op, at, ctx);
  for (const key of ['summary', 'description'] as const)
    if ((o.op[key] ?? '') !== (n.op[key] ?? '')) ctx.push('description-changed', `${at}/${key}`, `${key} changed`);
  compareRest(o.op, n.op, 'operation', at, kind, ctx);

  // stability: lowering a level takes back a promise
  const ol = stabilityOf(o.op);
  const nl = stabilityOf(n.op);
  if (STABILITY_RANK[nl] < STABILITY_RANK[ol])
    ctx.push('stability-level-decreased', `${at}/x-stability-level`, `stability level lowered from ${ol} to ${nl}`);
  if (STABILITY_RANK[nl] > STABILITY_RANK[ol])
    ctx.push('stability-level-increased', `${at}/x-stability-level`, `stability level raised from ${ol} to ${nl}`);
}

/** `x-stability-level` of an operation; absent means stable, and so does a value outside the levels (its own finding). */
export function stabilityOf(op: Json): StabilityLevel {
  const level: unknown = op['x-stability-level'];
  return isStabilityLevel(level) ? level : 'stable';
}
