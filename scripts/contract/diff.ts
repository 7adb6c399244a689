/**
 * Compares two OpenAPI documents (3.0.x or 3.1.x) and classifies every change for the
 * clients of the old one: breaking, non-breaking, or a notice (something to warn about).
 *
 * Requests and responses are compared in opposite directions: a request schema may only
 * accept more than before, a response schema may only promise more than before.
 */
import { readFileSync } from 'node:fs';
import $RefParser from '@apidevtools/json-schema-ref-parser';
import OpenAPISchemaValidator from 'openapi-schema-validator';
import { parse } from 'yaml';
import { bundleSpec } from '../../src/contract/bundle';
import { basePathOfUrl } from '../../src/contract/spec';

export type ChangeClass = 'breaking' | 'non-breaking' | 'notice';

export interface Change {
  class: ChangeClass;
  /** A stable identifier of the rule, e.g. `request-parameter-removed`. */
  rule: string;
  /** `METHOD /path` of the operation concerned, when there is one. */
  operation?: string;
  /** JSON pointer into the new document (into the old one for what was removed). */
  pointer: string;
  message: string;
}

/** A document that could not be read or is not a valid OpenAPI 3.0/3.1 document. */
export class DocumentError extends Error {
  constructor(
    readonly file: string,
    reason: string,
  ) {
    super(`${file}: ${reason}`);
    this.name = 'DocumentError';
  }
}

type Json = Record<string, any>;
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** Reads YAML or JSON (split into several files or not), checks that it is OpenAPI 3.0.x/3.1.x, and resolves every `$ref`. */
export async function loadDocument(file: string): Promise<Json> {
  let doc: unknown;
  try {
    doc = parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new DocumentError(file, `cannot be read as YAML or JSON: ${(err as Error).message.split('\n')[0]}`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    throw new DocumentError(file, 'is not an OpenAPI document (not an object)');
  const version = String((doc as Json).openapi ?? '');
  if (!/^3\.[01]\.\d+$/.test(version))
    throw new DocumentError(file, `has openapi: ${JSON.stringify((doc as Json).openapi)}; only 3.0.x and 3.1.x are compared`);
  // A spec split into several files is compared as the one document it bundles into.
  let d: Json;
  try {
    d = (await bundleSpec(file)).document;
  } catch (err) {
    throw new DocumentError(file, `has a $ref to another file that cannot be read: ${(err as Error).message.split('\n')[0]}`);
  }
  if (version.startsWith('3.0.')) {
    const { errors } = new OpenAPISchemaValidator({ version: 3 }).validate(d as never);
    if (errors.length > 0) {
      const e = errors[0] as { instancePath?: string; message?: string };
      throw new DocumentError(
        file,
        `is not valid OpenAPI ${version}: ${e.instancePath || '/'} ${e.message}${errors.length > 1 ? ` (and ${errors.length - 1} more)` : ''}`,
      );
    }
  } else {
    // 3.1: the structure this comparison relies on.
    if (typeof d.info?.title !== 'string' || typeof d.info?.version !== 'string')
      throw new DocumentError(file, 'is not valid OpenAPI: info.title and info.version are required');
    if (d.paths !== undefined && (typeof d.paths !== 'object' || d.paths === null))
      throw new DocumentError(file, 'is not valid OpenAPI: paths must be an object');
  }
  try {
    return await $RefParser.dereference<Json>(structuredClone(d), { dereference: { circular: 'ignore' } });
  } catch (err) {
    throw new DocumentError(file, `has a $ref that cannot be resolved: ${(err as Error).message}`);
  }
}

const esc = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');
const ptr = (...parts: (string | number)[]) => `/${parts.map((p) => esc(String(p))).join('/')}`;

interface Ctx {
  push: (c: Omit<Change, 'operation'>) => void;
}

/** The base path every server URL of a document ends in (`/v1`), or '' when it has none. */
function basePaths(doc: Json): string[] {
  return [...new Set<string>((doc.servers ?? []).map((s: Json) => basePathOfUrl(String(s.url))))].sort();
}

// ---------------------------------------------------------------- schemas

/** allOf merged into one schema, so that `Pet = allOf[NewPet, {id}]` compares property by property. */
function flatten(schema: Json | undefined): Json {
  if (!schema || typeof schema !== 'object') return {};
  if (!Array.isArray(schema.allOf)) return schema;
  const merged: Json = { ...schema, properties: { ...(schema.properties ?? {}) }, required: [...(schema.required ?? [])] };
  delete merged.allOf;
  for (const part of schema.allOf.map(flatten)) {
    for (const [k, v] of Object.entries(part)) {
      if (k === 'properties') Object.assign(merged.properties, v);
      else if (k === 'required') merged.required.push(...(v as string[]));
      else if (merged[k] === undefined) merged[k] = v;
    }
  }
  if (Object.keys(merged.properties).length === 0) delete merged.properties;
  if (merged.required.length === 0) delete merged.required;
  return merged;
}

function typesOf(s: Json): Set<string> | undefined {
  let t = s.type;
  if (t === undefined) {
    if (s.properties) t = 'object';
    else if (s.items) t = 'array';
    else return undefined;
  }
  const set = new Set<string>(Array.isArray(t) ? t : [t]);
  if (s.nullable === true) set.add('null');
  return set;
}

/** Every value of type set `b` is also of type set `a` (an integer is a number). */
function covers(a: Set<string> | undefined, b: Set<string> | undefined): boolean {
  if (a === undefined) return true;
  if (b === undefined) return false;
  return [...b].every((t) => a.has(t) || (t === 'integer' && a.has('number')));
}

const fmt = (v: unknown) => JSON.stringify(v);

type Direction = 'request' | 'response';

function compareSchema(oldS: Json | undefined, newS: Json | undefined, dir: Direction, at: string, ctx: Ctx, seen = new Set<Json>()): void {
  const o = flatten(oldS);
  const n = flatten(newS);
  if (seen.has(o) || seen.has(n)) return; // a recursive schema, already being compared
  seen.add(o);
  seen.add(n);
  const req = dir === 'request';
  const what = req ? 'request' : 'response';

  // type (3.0 `nullable` counts as the type null, as 3.1 writes it)
  const ot = typesOf(o);
  const nt = typesOf(n);
  const typeText = (t: Set<string> | undefined) => (t ? [...t].sort().join('|') : 'any');
  if (typeText(ot) !== typeText(nt)) {
    const breaking = req ? !covers(nt, ot) : !covers(ot, nt);
    ctx.push({
      class: breaking ? 'breaking' : 'non-breaking',
      rule: `${what}-type-changed`,
      pointer: at,
      message: `type changed from ${typeText(ot)} to ${typeText(nt)}`,
    });
  }

  // format
  if (o.format !== n.format) {
    const breaking = o.format === undefined ? req : n.format === undefined ? !req : true;
    ctx.push({
      class: breaking ? 'breaking' : 'non-breaking',
      rule: `${what}-format-changed`,
      pointer: at,
      message: `format changed from ${o.format ?? 'none'} to ${n.format ?? 'none'}`,
    });
  }

  // enum
  if (fmt(o.enum) !== fmt(n.enum)) {
    const ov: unknown[] | undefined = o.enum;
    const nv: unknown[] | undefined = n.enum;
    const removed = ov ? (nv ? ov.filter((v) => !nv.some((x) => fmt(x) === fmt(v))) : []) : [];
    const added = nv ? (ov ? nv.filter((v) => !ov.some((x) => fmt(x) === fmt(v))) : []) : [];
    if (ov && !nv) {
      ctx.push({
        class: req ? 'non-breaking' : 'notice',
        rule: `${what}-enum-removed`,
        pointer: at,
        message: `the enum ${fmt(ov)} no longer restricts the value`,
      });
    } else if (!ov && nv) {
      ctx.push({
        class: req ? 'breaking' : 'non-breaking',
        rule: `${what}-enum-added`,
        pointer: at,
        message: `the value is now restricted to ${fmt(nv)}`,
      });
    } else {
      if (removed.length)
        ctx.push({
          class: req ? 'breaking' : 'non-breaking',
          rule: `${what}-enum-value-removed`,
          pointer: at,
          message: `enum value(s) ${removed.map(fmt).join(', ')} removed`,
        });
      if (added.length) {
        ctx.push(
          req
            ? {
                class: 'non-breaking',
                rule: 'request-enum-value-added',
                pointer: at,
                message: `enum value(s) ${added.map(fmt).join(', ')} added`,
              }
            : {
                class: 'notice',
                rule: 'response-enum-value-added',
                pointer: at,
                message: `enum value(s) ${added.map(fmt).join(', ')} added to a response: clients that switch on this value may not handle them`,
              },
        );
      }
    }
  }

  // numeric and length bounds: a request may only accept more, a response may only promise more
  const bounds: [string, 'min' | 'max'][] = [
    ['minimum', 'min'],
    ['exclusiveMinimum', 'min'],
    ['minLength', 'min'],
    ['minItems', 'min'],
    ['minProperties', 'min'],
    ['maximum', 'max'],
    ['exclusiveMaximum', 'max'],
    ['maxLength', 'max'],
    ['maxItems', 'max'],
    ['maxProperties', 'max'],
  ];
  for (const [key, kind] of bounds) {
    const ov = typeof o[key] === 'number' ? o[key] : undefined;
    const nv = typeof n[key] === 'number' ? n[key] : undefined;
    if (ov === nv) continue;
    // tighter: the set of allowed values shrank
    const tighter = ov === undefined ? true : nv === undefined ? false : kind === 'min' ? nv > ov : nv < ov;
    const verb = ov === undefined ? 'added' : nv === undefined ? 'removed' : (kind === 'min') === tighter ? 'raised' : 'lowered';
    ctx.push({
      class: req ? (tighter ? 'breaking' : 'non-breaking') : tighter ? 'non-breaking' : 'notice',
      rule: `${what}-${key}-${verb}`,
      pointer: at,
      message: `${key} ${verb}: ${ov ?? 'none'} → ${nv ?? 'none'}`,
    });
  }

  if (o.pattern !== n.pattern) {
    const tighter = n.pattern !== undefined;
    ctx.push({
      class: req ? (tighter ? 'breaking' : 'non-breaking') : tighter ? 'non-breaking' : 'notice',
      rule: `${what}-pattern-${o.pattern === undefined ? 'added' : n.pattern === undefined ? 'removed' : 'changed'}`,
      pointer: at,
      message: `pattern changed from ${o.pattern ?? 'none'} to ${n.pattern ?? 'none'}`,
    });
  }

  if (req && fmt(o.default) !== fmt(n.default)) {
    ctx.push({
      class: 'breaking',
      rule: 'request-default-changed',
      pointer: at,
      message: `default changed from ${fmt(o.default) ?? 'none'} to ${fmt(n.default) ?? 'none'}: requests that leave it out now mean something else`,
    });
  }

  if (req && o.additionalProperties !== false && n.additionalProperties === false) {
    ctx.push({
      class: 'breaking',
      rule: 'request-additional-properties-refused',
      pointer: at,
      message: 'properties not listed are now refused',
    });
  }

  for (const key of ['oneOf', 'anyOf', 'not'] as const) {
    if (fmt(o[key]) !== fmt(n[key])) {
      ctx.push({
        class: 'breaking',
        rule: `${what}-${key}-changed`,
        pointer: at,
        message: `${key} changed (not compared in detail: treated as breaking)`,
      });
    }
  }

  if ((o.description ?? '') !== (n.description ?? '')) {
    ctx.push({ class: 'non-breaking', rule: 'description-changed', pointer: at, message: 'description changed' });
  }

  // properties
  const op: Json = o.properties ?? {};
  const np: Json = n.properties ?? {};
  const oreq = new Set<string>(o.required ?? []);
  const nreq = new Set<string>(n.required ?? []);
  for (const name of Object.keys(op)) {
    const pAt = `${at}/properties/${esc(name)}`;
    if (!(name in np)) {
      ctx.push({ class: 'breaking', rule: `${what}-property-removed`, pointer: pAt, message: `property '${name}' removed` });
      continue;
    }
    if (oreq.has(name) && !nreq.has(name)) {
      ctx.push({
        class: req ? 'non-breaking' : 'breaking',
        rule: `${what}-property-made-optional`,
        pointer: pAt,
        message: `property '${name}' is no longer required`,
      });
    }
    if (!oreq.has(name) && nreq.has(name)) {
      ctx.push({
        class: req ? 'breaking' : 'non-breaking',
        rule: `${what}-property-made-required`,
        pointer: pAt,
        message: `property '${name}' is now required`,
      });
    }
    compareSchema(op[name], np[name], dir, pAt, ctx, seen);
  }
  for (const name of Object.keys(np)) {
    if (name in op) continue;
    const pAt = `${at}/properties/${esc(name)}`;
    if (req && nreq.has(name))
      ctx.push({ class: 'breaking', rule: 'request-required-property-added', pointer: pAt, message: `required property '${name}' added` });
    else
      ctx.push({
        class: 'non-breaking',
        rule: `${what}-property-added`,
        pointer: pAt,
        message: `${req ? 'optional ' : ''}property '${name}' added`,
      });
  }

  if (o.items || n.items) compareSchema(o.items, n.items, dir, `${at}/items`, ctx, seen);
}

// ---------------------------------------------------------------- operations

interface Operation {
  key: string; // METHOD /path with parameter names blanked: the identity of an operation
  label: string; // METHOD /path as written
  path: string;
  method: string;
  op: Json;
  params: Map<string, { param: Json; pointer: string }>;
  pointer: string;
}

function operationsOf(doc: Json): Map<string, Operation> {
  const ops = new Map<string, Operation>();
  for (const [path, item] of Object.entries<Json>(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item?.[method];
      if (!op) continue;
      const params = new Map<string, { param: Json; pointer: string }>();
      const pathNames = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
      const declared = [
        ...(item.parameters ?? []).map((p: Json, i: number) => ({ param: p, pointer: ptr('paths', path, 'parameters', i) })),
        ...(op.parameters ?? []).map((p: Json, i: number) => ({ param: p, pointer: ptr('paths', path, method, 'parameters', i) })),
      ];
      for (const d of declared) {
        const p = d.param;
        // Path parameters are matched by position: renaming {id} to {petId} changes no URL.
        const key =
          p.in === 'path'
            ? `path #${pathNames.indexOf(p.name) + 1}`
            : `${p.in} ${p.in === 'header' ? String(p.name).toLowerCase() : p.name}`;
        params.set(key, d);
      }
      ops.set(`${method.toUpperCase()} ${path.replace(/\{[^}]+\}/g, '{}')}`, {
        key: `${method.toUpperCase()} ${path.replace(/\{[^}]+\}/g, '{}')}`,
        label: `${method.toUpperCase()} ${path}`,
        path,
        method,
        op,
        params,
        pointer: ptr('paths', path, method),
      });
    }
  }
  return ops;
}

function securityOf(doc: Json, op: Json): string[] {
  const reqs: Json[] = op.security ?? doc.security ?? [];
  return reqs
    .map((r) =>
      Object.keys(r)
        .sort()
        .map((name) => `${name}${fmt(doc.components?.securitySchemes?.[name] ?? null)}[${[...(r[name] ?? [])].sort().join(',')}]`)
        .join(' + '),
    )
    .sort();
}

const isSuccess = (status: string) => /^[23]/.test(status) || /^[23]XX$/i.test(status);

function compareOperation(oldDoc: Json, newDoc: Json, o: Operation, n: Operation, ctx: Ctx): void {
  const at = n.pointer;
  if (o.op.operationId !== n.op.operationId) {
    ctx.push({
      class: 'breaking',
      rule: 'operation-id-changed',
      pointer: `${at}/operationId`,
      message: `operationId changed from ${o.op.operationId ?? 'none'} to ${n.op.operationId ?? 'none'}: generated clients call it by name`,
    });
  }
  if (!o.op.deprecated && n.op.deprecated) {
    ctx.push({ class: 'notice', rule: 'operation-deprecated', pointer: `${at}/deprecated`, message: 'operation is now deprecated' });
  } else if (o.op.deprecated && !n.op.deprecated) {
    ctx.push({
      class: 'non-breaking',
      rule: 'operation-undeprecated',
      pointer: `${at}/deprecated`,
      message: 'operation is no longer deprecated',
    });
  }
  const os = o.op['x-sunset'];
  const ns = n.op['x-sunset'];
  if (os !== ns) {
    if (os === undefined)
      ctx.push({ class: 'notice', rule: 'sunset-added', pointer: `${at}/x-sunset`, message: `operation is to be removed on ${ns}` });
    else if (ns === undefined)
      ctx.push({ class: 'non-breaking', rule: 'sunset-removed', pointer: `${at}/x-sunset`, message: `removal date ${os} withdrawn` });
    else if (String(ns) < String(os))
      ctx.push({
        class: 'breaking',
        rule: 'sunset-moved-earlier',
        pointer: `${at}/x-sunset`,
        message: `removal moved earlier, from ${os} to ${ns}: clients planned for ${os}`,
      });
    else
      ctx.push({
        class: 'notice',
        rule: 'sunset-moved-later',
        pointer: `${at}/x-sunset`,
        message: `removal moved later, from ${os} to ${ns}`,
      });
  }
  for (const key of ['summary', 'description'] as const) {
    if ((o.op[key] ?? '') !== (n.op[key] ?? ''))
      ctx.push({ class: 'non-breaking', rule: 'description-changed', pointer: `${at}/${key}`, message: `${key} changed` });
  }

  // security: every way a client could authenticate before must still work
  const oSec = securityOf(oldDoc, o.op);
  const nSec = securityOf(newDoc, n.op);
  if (fmt(oSec) !== fmt(nSec)) {
    // No requirement, or an empty one ({}), lets a client in without credentials.
    const anonymous = (sec: string[]) => sec.length === 0 || sec.includes('');
    const lost = !anonymous(nSec) && (anonymous(oSec) || oSec.some((r) => !nSec.includes(r)));
    ctx.push({
      class: lost ? 'breaking' : 'non-breaking',
      rule: !lost ? 'security-requirement-loosened' : anonymous(oSec) ? 'security-requirement-added' : 'security-requirement-changed',
      pointer: `${at}/security`,
      message: `security changed from ${oSec.join(' or ') || 'none'} to ${nSec.join(' or ') || 'none'}`,
    });
  }

  // parameters
  for (const [key, { param: p, pointer: oldAt }] of o.params) {
    const found = n.params.get(key);
    if (!found) {
      ctx.push({
        class: 'breaking',
        rule: 'request-parameter-removed',
        pointer: oldAt,
        message: `${p.in} parameter '${p.name}' removed: requests that send it are refused or misread`,
      });
      continue;
    }
    const { param: np, pointer: pAt } = found;
    if (!p.required && np.required)
      ctx.push({
        class: 'breaking',
        rule: 'request-parameter-made-required',
        pointer: pAt,
        message: `parameter '${np.name}' (${np.in}) is now required`,
      });
    if (p.required && !np.required)
      ctx.push({
        class: 'non-breaking',
        rule: 'request-parameter-made-optional',
        pointer: pAt,
        message: `parameter '${np.name}' (${np.in}) is now optional`,
      });
    if ((p.description ?? '') !== (np.description ?? ''))
      ctx.push({
        class: 'non-breaking',
        rule: 'description-changed',
        pointer: pAt,
        message: `description of parameter '${np.name}' changed`,
      });
    compareSchema(p.schema, np.schema, 'request', `${pAt}/schema`, ctx);
  }
  for (const [key, { param: np, pointer: pAt }] of n.params) {
    if (o.params.has(key)) continue;
    ctx.push(
      np.required
        ? {
            class: 'breaking',
            rule: 'request-required-parameter-added',
            pointer: pAt,
            message: `required ${np.in} parameter '${np.name}' added`,
          }
        : {
            class: 'non-breaking',
            rule: 'request-optional-parameter-added',
            pointer: pAt,
            message: `optional ${np.in} parameter '${np.name}' added`,
          },
    );
  }

  // request body
  const ob: Json | undefined = o.op.requestBody;
  const nb: Json | undefined = n.op.requestBody;
  if (ob && !nb) {
    ctx.push({ class: 'breaking', rule: 'request-body-removed', pointer: `${o.pointer}/requestBody`, message: 'request body removed' });
  } else if (!ob && nb) {
    ctx.push({
      class: nb.required ? 'breaking' : 'non-breaking',
      rule: nb.required ? 'request-body-added-required' : 'request-body-added-optional',
      pointer: `${at}/requestBody`,
      message: `${nb.required ? 'required' : 'optional'} request body added`,
    });
  } else if (ob && nb) {
    if (!ob.required && nb.required)
      ctx.push({
        class: 'breaking',
        rule: 'request-body-made-required',
        pointer: `${at}/requestBody/required`,
        message: 'request body is now required',
      });
    if (ob.required && !nb.required)
      ctx.push({
        class: 'non-breaking',
        rule: 'request-body-made-optional',
        pointer: `${at}/requestBody/required`,
        message: 'request body is now optional',
      });
    const oc: Json = ob.content ?? {};
    const nc: Json = nb.content ?? {};
    for (const type of Object.keys(oc)) {
      const cAt = `${at}/requestBody/content/${esc(type)}`;
      if (!(type in nc))
        ctx.push({
          class: 'breaking',
          rule: 'request-content-type-removed',
          pointer: cAt,
          message: `request content type ${type} is no longer accepted`,
        });
      else compareSchema(oc[type].schema, nc[type].schema, 'request', `${cAt}/schema`, ctx);
    }
    for (const type of Object.keys(nc)) {
      if (!(type in oc))
        ctx.push({
          class: 'non-breaking',
          rule: 'request-content-type-added',
          pointer: `${at}/requestBody/content/${esc(type)}`,
          message: `request content type ${type} added`,
        });
    }
  }

  // responses
  const or: Json = o.op.responses ?? {};
  const nr: Json = n.op.responses ?? {};
  const addedSuccess = Object.keys(nr).filter((s) => !(s in or) && isSuccess(s));
  for (const status of Object.keys(or)) {
    const rAt = `${at}/responses/${esc(status)}`;
    if (!(status in nr)) {
      if (isSuccess(status)) {
        const instead = addedSuccess.length ? ` (now ${addedSuccess.join(', ')})` : '';
        ctx.push({
          class: 'breaking',
          rule: addedSuccess.length ? 'success-response-status-changed' : 'success-response-removed',
          pointer: `${o.pointer}/responses/${esc(status)}`,
          message: `success response ${status} removed${instead}`,
        });
      } else {
        ctx.push({
          class: 'non-breaking',
          rule: 'error-response-removed',
          pointer: `${o.pointer}/responses/${esc(status)}`,
          message: `response ${status} no longer documented`,
        });
      }
      continue;
    }
    const oc: Json = or[status].content ?? {};
    const nc: Json = nr[status].content ?? {};
    for (const type of Object.keys(oc)) {
      const cAt = `${rAt}/content/${esc(type)}`;
      if (!(type in nc))
        ctx.push({
          class: 'breaking',
          rule: 'response-content-type-removed',
          pointer: cAt,
          message: `response ${status} no longer comes as ${type}`,
        });
      else compareSchema(oc[type].schema, nc[type].schema, 'response', `${cAt}/schema`, ctx);
    }
    for (const type of Object.keys(nc)) {
      if (!(type in oc))
        ctx.push({
          class: 'non-breaking',
          rule: 'response-content-type-added',
          pointer: `${rAt}/content/${esc(type)}`,
          message: `response ${status} may also come as ${type}`,
        });
    }
    const oh: Json = or[status].headers ?? {};
    const nh: Json = nr[status].headers ?? {};
    const lower = (h: Json) => new Set(Object.keys(h).map((k) => k.toLowerCase()));
    for (const h of lower(oh))
      if (!lower(nh).has(h))
        ctx.push({
          class: 'breaking',
          rule: 'response-header-removed',
          pointer: `${rAt}/headers`,
          message: `response ${status} no longer carries the ${h} header`,
        });
    for (const h of lower(nh))
      if (!lower(oh).has(h))
        ctx.push({
          class: 'non-breaking',
          rule: 'response-header-added',
          pointer: `${rAt}/headers`,
          message: `response ${status} now carries the ${h} header`,
        });
    if ((or[status].description ?? '') !== (nr[status].description ?? ''))
      ctx.push({
        class: 'non-breaking',
        rule: 'description-changed',
        pointer: `${rAt}/description`,
        message: `description of response ${status} changed`,
      });
  }
  for (const status of Object.keys(nr)) {
    if (!(status in or) && !(isSuccess(status) && Object.keys(or).some((s) => isSuccess(s) && !(s in nr)))) {
      ctx.push({
        class: 'non-breaking',
        rule: 'response-added',
        pointer: `${at}/responses/${esc(status)}`,
        message: `response ${status} added`,
      });
    }
  }
}

/** Every change from `oldDoc` to `newDoc` (both dereferenced), most severe first. */
export function diffDocuments(oldDoc: Json, newDoc: Json, options: { today?: Date } = {}): Change[] {
  const today = (options.today ?? new Date()).toISOString().slice(0, 10);
  const changes: Change[] = [];
  const ctxFor = (operation?: string): Ctx => ({ push: (c) => changes.push({ ...c, ...(operation ? { operation } : {}) }) });

  const ob = basePaths(oldDoc);
  const nb = basePaths(newDoc);
  if (fmt(ob) !== fmt(nb)) {
    ctxFor().push({
      class: 'breaking',
      rule: 'server-base-path-changed',
      pointer: '/servers',
      message: `base path changed from ${ob.join(', ') || 'none'} to ${nb.join(', ') || 'none'}: every URL changes`,
    });
  }
  if ((oldDoc.info?.description ?? '') !== (newDoc.info?.description ?? '')) {
    ctxFor().push({ class: 'non-breaking', rule: 'description-changed', pointer: '/info/description', message: 'API description changed' });
  }

  const oldOps = operationsOf(oldDoc);
  const newOps = operationsOf(newDoc);
  for (const [key, o] of oldOps) {
    const n = newOps.get(key);
    if (n) {
      compareOperation(oldDoc, newDoc, o, n, ctxFor(n.label));
      continue;
    }
    const sunset = o.op['x-sunset'];
    const renamedTo = [...newOps.values()].find((x) => x.op.operationId && x.op.operationId === o.op.operationId && !oldOps.has(x.key));
    const how = renamedTo ? `moved to ${renamedTo.label}` : 'removed';
    if (typeof sunset === 'string' && sunset <= today) {
      ctxFor(o.label).push({
        class: 'notice',
        rule: 'operation-removed-after-sunset',
        pointer: o.pointer,
        message: `operation ${how} after its sunset date ${sunset}`,
      });
    } else {
      ctxFor(o.label).push({
        class: 'breaking',
        rule: 'operation-removed',
        pointer: o.pointer,
        message: `operation ${how}${sunset ? ` before its sunset date ${sunset}` : ''}`,
      });
    }
  }
  for (const [key, n] of newOps) {
    if (!oldOps.has(key))
      ctxFor(n.label).push({ class: 'non-breaking', rule: 'operation-added', pointer: n.pointer, message: 'operation added' });
  }

  const order: Record<ChangeClass, number> = { breaking: 0, notice: 1, 'non-breaking': 2 };
  return changes.sort((a, b) => order[a.class] - order[b.class]);
}

// ---------------------------------------------------------------- output

export function formatChanges(changes: Change[], format: 'text' | 'json' | 'markdown', title = 'Contract changes'): string {
  const counts = (['breaking', 'notice', 'non-breaking'] as const)
    .map((c) => `${changes.filter((x) => x.class === c).length} ${c}`)
    .join(', ');
  if (format === 'json') return JSON.stringify({ breaking: changes.some((c) => c.class === 'breaking'), changes }, null, 2);
  if (format === 'markdown') {
    const cell = (s: string) => s.replace(/\|/g, '\\|');
    const rows = changes.map(
      (c) =>
        `| ${c.class === 'breaking' ? '**breaking**' : c.class} | ${cell(c.operation ?? '')} | \`${cell(c.pointer)}\` | ${cell(c.message)} | \`${c.rule}\` |`,
    );
    return [
      `### ${title}`,
      '',
      counts,
      '',
      ...(changes.length ? ['| class | operation | where | change | rule |', '|---|---|---|---|---|', ...rows] : ['No changes.']),
    ].join('\n');
  }
  const lines = changes.map(
    (c) =>
      `${c.class.toUpperCase().padEnd(12)} ${c.operation ? `${c.operation}: ` : ''}${c.message}\n${' '.repeat(13)}at ${c.pointer} [${c.rule}]`,
  );
  return [...lines, `${changes.length ? '' : 'No changes. '}${counts}`].join('\n');
}
