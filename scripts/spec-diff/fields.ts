/**
 * The fields no comparer grades are still reported: those that only document (a summary, an
 * example, a tag's parent) as `documentation-changed` or `description-changed`, and any other
 * field of an object the comparers read only in part as `unread-field-changed` (info, naming
 * it), so that nothing a document says changes unseen. Extensions (`x-…`) are left out, but
 * for `x-sunset` and `x-stability-level`, which the comparers read.
 */
import type { Ctx } from './context';
import { METHODS } from '../../src/contract/methods';
import { esc, isObject, type Json, ptr } from './load';
import { canonical } from './schema';

/** The fields of each object the comparers grade, and those that only document it. */
export const FIELDS = {
  operation: {
    read: ['operationId', 'summary', 'description', 'deprecated', 'parameters', 'requestBody', 'responses', 'security', 'callbacks'],
    docs: ['tags', 'externalDocs'],
  },
  parameter: {
    read: ['name', 'in', 'description', 'required', 'deprecated', 'style', 'explode', 'allowReserved', 'schema', 'content'],
    docs: ['example', 'examples'],
  },
  requestBody: { read: ['content', 'required'], docs: ['description'] },
  mediaType: { read: ['schema', 'itemSchema', 'encoding', 'itemEncoding', 'prefixEncoding'], docs: ['example', 'examples'] },
  response: { read: ['description', 'headers', 'content'], docs: ['summary'] },
  header: { read: ['required', 'deprecated', 'schema', 'content', 'style', 'explode'], docs: ['description', 'example', 'examples'] },
} as const satisfies Record<string, { read: readonly string[]; docs: readonly string[] }>;

const changed = (a: unknown, b: unknown) => canonical(a ?? null) !== canonical(b ?? null);

/** The documentation fields of an object: a description is `description-changed`, the rest `documentation-changed`. */
export function compareDocumentation(o: unknown, n: unknown, fields: readonly string[], at: string, what: string, ctx: Ctx): void {
  const a = isObject(o) ? o : {};
  const b = isObject(n) ? n : {};
  for (const f of fields)
    if (changed(a[f], b[f]))
      ctx.push(f === 'description' ? 'description-changed' : 'documentation-changed', `${at}/${esc(f)}`, `${what}: ${f} changed`);
}

/** Every field of an object neither graded nor documentation: each change is `unread-field-changed`, naming it. */
export function compareUnread(
  o: unknown,
  n: unknown,
  known: { read: readonly string[]; docs: readonly string[] },
  at: string,
  what: string,
  ctx: Ctx,
): void {
  const a = isObject(o) ? o : {};
  const b = isObject(n) ? n : {};
  for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
    if (k.startsWith('x-') || known.read.includes(k) || known.docs.includes(k) || k === '$ref') continue;
    if (changed(a[k], b[k]))
      ctx.push('unread-field-changed', `${at}/${esc(k)}`, `${what}: \`${k}\` changed (not graded: check it by hand)`);
  }
}

/** An object's documentation fields and its unread ones, in one call. */
export function compareRest(o: unknown, n: unknown, kind: keyof typeof FIELDS, at: string, what: string, ctx: Ctx): void {
  compareDocumentation(o, n, FIELDS[kind].docs, at, what, ctx);
  compareUnread(o, n, FIELDS[kind], at, what, ctx);
}

/**
 * The document's own fields: `$self` (3.2: relative `$ref`s resolve against it), the info and
 * tags and servers that only document, and the rest (`jsonSchemaDialect`, …) as unread.
 */
export function compareDocumentFields(oldDoc: Json, newDoc: Json, ctx: Ctx): void {
  if (changed(oldDoc.$self, newDoc.$self))
    ctx.push(
      'document-self-changed',
      '/$self',
      `$self changed from ${JSON.stringify(oldDoc.$self ?? null)} to ${JSON.stringify(newDoc.$self ?? null)}: relative $refs now resolve against another base`,
    );
  const info = (d: Json): Json => (isObject(d.info) ? d.info : {});
  compareDocumentation(info(oldDoc), info(newDoc), ['title', 'summary', 'termsOfService', 'contact', 'license'], '/info', 'info', ctx);
  compareDocumentation(oldDoc, newDoc, ['externalDocs'], '', 'document', ctx);
  const tags = (d: Json) => new Map((Array.isArray(d.tags) ? (d.tags as Json[]) : []).map((t, i) => [String(t?.name), { t, i }]));
  const ot = tags(oldDoc);
  const nt = tags(newDoc);
  for (const name of new Set([...ot.keys(), ...nt.keys()])) {
    const o = ot.get(name);
    const n = nt.get(name);
    const at = `/tags/${n?.i ?? o?.i ?? 0}`;
    if (!o || !n) ctx.push('documentation-changed', at, `tag ${name} ${n ? 'added' : 'removed'}`, n ? 'new' : 'old');
    else compareDocumentation(o.t, n.t, ['summary', 'description', 'parent', 'kind', 'externalDocs'], at, `tag ${name}`, ctx);
  }
  const servers = (d: Json): Json[] => (Array.isArray(d.servers) ? d.servers : []);
  servers(newDoc).forEach((s, i) => {
    const o = servers(oldDoc).find((x) => x?.url === s?.url);
    if (o) compareDocumentation(o, s, ['name', 'description'], `/servers/${i}`, `server ${String(s?.url)}`, ctx);
  });
  compareUnread(
    oldDoc,
    newDoc,
    { read: ['openapi', 'info', 'servers', 'paths', 'webhooks', 'components', 'security', '$self'], docs: ['tags', 'externalDocs'] },
    '',
    'document',
    ctx,
  );
  // A path item's own fields, beside its operations and parameters (compared with the operations).
  const pathItem = { read: [...METHODS, 'query', 'additionalOperations', 'parameters'], docs: ['summary', 'description'] };
  for (const root of ['paths', 'webhooks'] as const) {
    const before: Json = isObject(oldDoc[root]) ? oldDoc[root] : {};
    const after: Json = isObject(newDoc[root]) ? newDoc[root] : {};
    for (const [name, item] of Object.entries(after))
      if (isObject(before[name]) && isObject(item)) {
        const what = root === 'paths' ? `path ${name}` : `webhook ${name}`;
        compareDocumentation(before[name], item, pathItem.docs, ptr(root, name), what, ctx);
        compareUnread(before[name], item, pathItem, ptr(root, name), what, ctx);
      }
  }
}
