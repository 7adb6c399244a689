import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { minifySync, transformSync } from '@swc/core';
import { projectRoot } from '../../src/paths';

const CLIENT = path.join(projectRoot, 'src', 'client');
const OPENAPI_FETCH = path.join(projectRoot, 'node_modules', 'openapi-fetch', 'dist', 'index.mjs');

/**
 * The client as a browser loads it: each file of src/client/ as an ES module (`index.js`,
 * `retry.js`, …; types stripped, its sibling imports given their `.js`), importing only
 * `openapi-fetch`, which a page maps to openapi-fetch's own ES module (`openapiFetchModule`).
 */
export function clientModules({ minify = false } = {}): Map<string, string> {
  const modules = new Map<string, string>();
  for (const name of readdirSync(CLIENT).filter((f) => f.endsWith('.ts'))) {
    const { code } = transformSync(readFileSync(path.join(CLIENT, name), 'utf8'), {
      filename: name,
      jsc: { parser: { syntax: 'typescript' }, target: 'es2022', minify: { compress: true, mangle: true } },
      module: { type: 'es6' },
      minify,
      sourceMaps: false,
    });
    modules.set(name.replace(/\.ts$/, '.js'), code.replace(/(from\s*["']\.\/[a-z]+)(["'])/gi, '$1.js$2'));
  }
  return modules;
}

/** openapi-fetch's ES module, as the package ships it. */
export const openapiFetchModule = (): string => readFileSync(OPENAPI_FETCH, 'utf8');

export interface Size {
  what: string;
  /** Bytes of source, minified, and minified then gzipped. */
  source: number;
  minified: number;
  gzipped: number;
}

/** The size of code as a bundler would ship it: minified (swc), then gzipped (level 9). */
function sizeOf(what: string, sources: string[], minified: string[]): Size {
  const joined = minified.join('\n');
  return {
    what,
    source: sources.reduce((sum, s) => sum + Buffer.byteLength(s), 0),
    minified: Buffer.byteLength(joined),
    gzipped: gzipSync(joined, { level: 9 }).length,
  };
}

/** The modules `entry` loads, itself included, following its sibling imports (`./x.js`). */
function reachable(modules: Map<string, string>, entry: string): string[] {
  const seen = new Set<string>();
  const visit = (name: string) => {
    if (seen.has(name) || !modules.has(name)) return;
    seen.add(name);
    for (const [, sibling] of (modules.get(name) ?? '').matchAll(/from\s*["']\.\/([a-z]+\.js)["']/gi)) visit(sibling as string);
  };
  visit(entry);
  return [...seen];
}

/**
 * The client's own modules (what `index.js` loads), openapi-fetch's, and both together (what a
 * consumer of the API ships); and the receiver's entry, `animal-store-api/webhooks`, alone.
 */
export function clientSizes(): Size[] {
  const all = clientModules();
  const allMin = clientModules({ minify: true });
  const names = reachable(all, 'index.js');
  const own = new Map(names.map((n) => [n, all.get(n) as string]));
  const ownMin = names.map((n) => allMin.get(n) as string);
  const receiver = reachable(all, 'webhooks.js');
  const fetchSource = openapiFetchModule();
  const fetchMin = minifySync(fetchSource, { module: true, compress: true, mangle: true }).code;
  return [
    sizeOf('src/client (this package)', [...own.values()], ownMin),
    sizeOf('openapi-fetch 0.17', [fetchSource], [fetchMin]),
    sizeOf('together', [...own.values(), fetchSource], [...ownMin, fetchMin]),
    sizeOf(
      'src/client/webhooks (verifyWebhook, for receivers)',
      receiver.map((n) => all.get(n) as string),
      receiver.map((n) => allMin.get(n) as string),
    ),
  ];
}
