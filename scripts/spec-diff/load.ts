/**
 * Reading the two documents: any OpenAPI 3.0.x, 3.1.x or 3.2.x document, YAML or JSON (or on stdin), split into
 * several files or not, with `$ref` cycles. And finding the line a JSON pointer names in
 * the files the document was written in, for annotations.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { CORE_SCHEMA, load } from 'js-yaml';
import type { LineCounter, Node } from 'yaml';
import { hasExternalRef } from '../../src/contract/externalRefs';

export type Json = Record<string, any>;

/** A JSON object (not an array, not null): what a document's objects are read as. */
export const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The name that reads a document from stdin. */
export const STDIN = '-';

/** A document that could not be read or is not an OpenAPI 3.0, 3.1 or 3.2 document. */
export class DocumentError extends Error {
  constructor(
    readonly file: string,
    reason: string,
  ) {
    super(`${file}: ${reason}`);
    this.name = 'DocumentError';
  }
}

/**
 * YAML 1.2's core schema (no timestamps: an `x-sunset: 2030-12-05` stays a string), read by
 * js-yaml: the spec diff's cold start pays for every module it loads, and js-yaml loads in a
 * third of the time `yaml` takes. `yaml` is loaded only to find lines (Locator) or keep comments.
 */
export const parseYaml = (text: string): unknown => load(text, { schema: CORE_SCHEMA });

/** JSON is YAML, but JSON.parse reads it many times faster. */
function parseJsonOrYaml(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return parseYaml(text);
  }
}

const firstLine = (err: unknown) => (err instanceof Error ? err.message : String(err)).split('\n')[0];

/**
 * Reads a document and resolves every `$ref`; a recursive schema becomes a cycle of objects.
 * Refuses only what is not OpenAPI 3.0.x/3.1.x/3.2.x or cannot be parsed or resolved, with the
 * reason: anything else the two specifications allow is compared.
 */
export async function loadDocument(file: string): Promise<Json> {
  let doc: unknown;
  const stdin = file === STDIN;
  try {
    // `-`: the document is read from stdin (fd 0), and may refer to no other file
    const text = readFileSync(stdin ? 0 : file, 'utf8');
    doc = /^\s*\{/.test(text) ? parseJsonOrYaml(text) : parseYaml(text);
  } catch (err) {
    throw new DocumentError(file, `cannot be read as YAML or JSON: ${firstLine(err)}`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    throw new DocumentError(file, 'is not an OpenAPI document (not an object)');
  const version = String((doc as Json).openapi ?? '');
  if (!/^3\.[012]\.\d+(-.+)?$/.test(version))
    throw new DocumentError(file, `has openapi: ${JSON.stringify((doc as Json).openapi)}; only 3.0.x, 3.1.x and 3.2.x are compared`);
  const d = doc as Json;
  const info = d.info as Json | undefined;
  if (typeof info?.title !== 'string' || typeof info?.version !== 'string')
    throw new DocumentError(file, `is not valid OpenAPI ${version}: info.title and info.version must be strings`);
  for (const key of ['paths', 'components', 'webhooks'])
    if (d[key] !== undefined && (typeof d[key] !== 'object' || d[key] === null || Array.isArray(d[key])))
      throw new DocumentError(file, `is not valid OpenAPI ${version}: ${key} must be an object`);
  // A spec split into several files is compared as the one document it bundles into.
  let bundled: Json = d;
  if (stdin && hasExternalRef(d))
    throw new DocumentError(file, 'has a $ref to another file: a document on stdin must be whole (give its path instead)');
  try {
    if (hasExternalRef(d)) {
      // loaded for a split spec only (it loads `yaml` and the bundler)
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { bundleSpec } = require('../../src/contract/bundle') as typeof import('../../src/contract/bundle');
      bundled = (await bundleSpec(file)).document;
    }
  } catch (err) {
    throw new DocumentError(file, `has a $ref to another file that cannot be read: ${firstLine(err)}`);
  }
  try {
    return dereference(bundled === d ? d : structuredClone(bundled));
  } catch (err) {
    throw new DocumentError(file, `has a $ref that cannot be resolved: ${firstLine(err)}`);
  }
}

const isRef = (v: unknown): v is Json & { $ref: string } => typeof v === 'object' && v !== null && typeof (v as Json).$ref === 'string';

/**
 * Replaces every `$ref` of a document (one file: a split spec is bundled first) by what it points
 * to, in place: a target reached twice is the same object, and a schema that refers to itself
 * becomes a cycle of objects. A `$ref` with siblings (3.1: `summary`, `description`) becomes a copy
 * of its target with the siblings over it. Written here rather than taken from a library: the
 * spec diff's cold start pays for every module it loads, and this is all it needs.
 */
export function dereference(doc: Json): Json {
  const target = (ref: string): unknown => {
    if (!ref.startsWith('#')) throw new Error(`${ref}: only references into the document are resolved here`);
    let at: unknown = doc;
    for (const raw of ref.slice(1).split('/').slice(1)) {
      const token = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
      if (typeof at !== 'object' || at === null || !Object.hasOwn(at, token))
        throw new Error(`Missing $ref pointer "${ref}". Token "${token}" does not exist.`);
      at = (at as Json)[token];
    }
    return at;
  };
  const crawled = new Set<unknown>();
  const resolve = (node: Json & { $ref: string }, chain: string[]): unknown => {
    if (chain.includes(node.$ref)) throw new Error(`the $ref chain ${[...chain, node.$ref].join(' → ')} never reaches a value`);
    const found = target(node.$ref);
    const value = isRef(found) ? resolve(found, [...chain, node.$ref]) : crawl(found);
    const siblings = Object.keys(node).filter((k) => k !== '$ref');
    if (siblings.length === 0 || typeof value !== 'object' || value === null || Array.isArray(value)) return value;
    return crawl({ ...(value as Json), ...Object.fromEntries(siblings.map((k) => [k, node[k]])) });
  };
  const crawl = (node: unknown): unknown => {
    if (typeof node !== 'object' || node === null) return node;
    if (isRef(node)) return resolve(node, []);
    // crawled already, or being crawled (an ancestor: the reference closes a cycle)
    if (crawled.has(node)) return node;
    crawled.add(node);
    for (const key of Object.keys(node)) (node as Json)[key] = crawl((node as Json)[key]);
    return node;
  };
  return crawl(doc) as Json;
}

export const esc = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');
const unesc = (s: string) => s.replace(/~1/g, '/').replace(/~0/g, '~');
export const ptr = (...parts: (string | number)[]) => `/${parts.map((p) => esc(String(p))).join('/')}`;

export interface Place {
  file: string;
  line: number;
}

interface Parsed {
  root: Node | null;
  lines: LineCounter;
}

/**
 * Finds the line of a JSON pointer of the resolved document in the file(s) it was written
 * in, following `$ref`s (to other files too); when the pointer's target is not written out,
 * the line of its nearest written ancestor.
 */
export class Locator {
  private readonly cache = new Map<string, Parsed | undefined>();
  // `yaml` keeps the source positions js-yaml drops: loaded when the first line is asked for
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  private readonly yaml = require('yaml') as typeof import('yaml');

  constructor(private readonly rootFile: string) {}

  private parsed(file: string): Parsed | undefined {
    if (!this.cache.has(file)) {
      let p: Parsed | undefined;
      try {
        const lines = new this.yaml.LineCounter();
        const doc = this.yaml.parseDocument(readFileSync(file, 'utf8'), { lineCounter: lines, keepSourceTokens: false });
        p = { root: doc.contents, lines };
      } catch {
        p = undefined;
      }
      this.cache.set(file, p);
    }
    return this.cache.get(file);
  }

  locate(pointer: string): Place {
    const parts = pointer.split('/').slice(1).map(unesc);
    return this.walk(path.resolve(this.rootFile), [], parts, 0).place;
  }

  /** Walks `refPath` then `rest` from the root of `file`; `complete` when the whole path was found. */
  private walk(file: string, refPath: string[], rest: string[], hops: number): { place: Place; complete: boolean } {
    const p = this.parsed(file);
    if (!p) return { place: { file, line: 1 }, complete: false };
    const { isMap, isScalar, isSeq } = this.yaml;
    const place = (n: Node | null | undefined): Place => ({ file, line: n?.range ? p.lines.linePos(n.range[0]).line : 1 });
    const parts = [...refPath, ...rest];
    let node: Node | null = p.root;
    let best = place(node);
    for (let i = 0; i <= parts.length; i++) {
      if (isMap(node) && hops < 50) {
        // A $ref stands for its target: go on from there.
        const ref = node.get('$ref');
        if (typeof ref === 'string') {
          const [target = '', fragment = ''] = ref.split('#');
          const targetFile = target ? path.resolve(path.dirname(file), target) : file;
          if (!target || existsSync(targetFile)) {
            const found = this.walk(targetFile, fragment.split('/').slice(1).map(unesc), parts.slice(i), hops + 1);
            return found.complete || i === parts.length ? found : { place: found.place.line > 1 ? found.place : best, complete: false };
          }
        }
      }
      if (i === parts.length) return { place: best, complete: true };
      const key = parts[i] as string;
      let next: unknown;
      if (isMap(node)) {
        const pair = node.items.find((it) => isScalar(it.key) && String(it.key.value) === key);
        if (pair) {
          best = place(pair.key as Node);
          next = pair.value;
        } else {
          // The comparison merges allOf: what it names may be written in one of the branches.
          const allOf = node.get('allOf');
          if (isSeq(allOf) && hops < 50) {
            for (let b = 0; b < allOf.items.length; b++) {
              const found = this.walk(file, [...parts.slice(0, i), 'allOf', String(b)], parts.slice(i), hops + 1);
              if (found.complete) return found;
            }
          }
        }
      } else if (isSeq(node)) next = node.items[Number(key)];
      if (!next) return { place: best, complete: false };
      node = next as Node;
      if (!isMap(node) && !isSeq(node)) best = place(node);
    }
    return { place: best, complete: true };
  }
}
