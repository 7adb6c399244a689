/**
 * Leaving parts of both documents out before they are compared: paths by a regular
 * expression (`--match-path`, `--unmatch-path`), and operations, path items and webhooks
 * that carry an extension with a truthy value (`--filter-extension x-internal`). The same
 * filter is applied to both documents, so what is left out is neither added nor removed.
 */
import { isObject, type Json } from './load';
import { operationKeysOf } from './operationParts';

export interface DocumentFilter {
  matchPath?: RegExp;
  unmatchPath?: RegExp;
  extension?: string;
}

/** A path item without the operations the extension marks; undefined when the item itself is marked or nothing is left. */
function kept(item: unknown, extension: string | undefined): unknown {
  if (!isObject(item) || extension === undefined) return item;
  if (item[extension]) return undefined;
  const keys = operationKeysOf(item);
  const marked = keys.filter((k) => isObject(k.op) && k.op[extension]);
  if (marked.length === 0) return item;
  if (marked.length === keys.length) return undefined;
  const copy: Json = { ...item };
  const additional: Json = isObject(item.additionalOperations) ? { ...item.additionalOperations } : {};
  for (const k of marked) {
    if (k.additional) delete additional[k.key];
    else delete copy[k.key];
  }
  if (isObject(item.additionalOperations)) copy.additionalOperations = additional;
  return copy;
}

/** The document with what the filter leaves out removed (the document itself is not changed). */
export function filterDocument(doc: Json, filter: DocumentFilter): Json {
  if (!filter.matchPath && !filter.unmatchPath && !filter.extension) return doc;
  const pick = (section: unknown, byPath: boolean): Json | undefined => {
    if (!isObject(section)) return section as undefined;
    const out: Json = {};
    for (const [name, item] of Object.entries(section)) {
      if (byPath && filter.matchPath && !filter.matchPath.test(name)) continue;
      if (byPath && filter.unmatchPath?.test(name)) continue;
      const k = kept(item, filter.extension);
      if (k !== undefined) out[name] = k;
    }
    return out;
  };
  return {
    ...doc,
    ...(doc.paths !== undefined ? { paths: pick(doc.paths, true) } : {}),
    ...(doc.webhooks !== undefined ? { webhooks: pick(doc.webhooks, false) } : {}),
  };
}
