import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { createBackend } from '../../src/contract/backend';
import { loadSpec } from '../../src/contract/spec';
import { createMockHandlers } from '../../src/handlers/mock';
import { createAuthenticator } from '../../src/http/auth';
import { RequestCore } from '../../src/http/core';
import { projectRoot } from '../../src/paths';

// The layout of src/ is its architecture (src/README.md): each layer imports only from the
// layers below it, and libraries are used through their public API.
// main.ts serves; primary.ts forks the serving processes (WEB_CONCURRENCY > 1); handlers sit above
// http, which answers any operation through the contract's handler types and knows none of them;
// webhooks (the events' delivery) works on the store's queue and knows no request.
const LAYERS = ['main', 'primary', 'app', 'config', 'handlers', 'mcp', 'http', 'contract', 'webhooks', 'store', 'ops'];
const src = path.join(projectRoot, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    return statSync(file).isDirectory() ? sourceFiles(file) : name.endsWith('.ts') ? [file] : [];
  });
}
/** `src/http/body.ts` → `http`, `src/main.ts` (or the import `./main`) → `main`. */
const layerOf = (file: string) => (path.relative(src, file).split(path.sep)[0] as string).replace(/\.ts$/, '');
const files = sourceFiles(src);

describe('the layers of src/', () => {
  test('when a file is in src/, then it belongs to a layer, or is one of the two that stand apart', () => {
    const stray = files.filter((f) => !LAYERS.includes(layerOf(f)) && !['paths', 'client'].includes(layerOf(f)));
    expect(stray).toEqual([]);
  });

  test.each(files.map((f) => [path.relative(projectRoot, f), f]))('%s imports only from the layers below its own', (_name, file) => {
    const rank = LAYERS.indexOf(layerOf(file));
    const upward = [...readFileSync(file, 'utf8').matchAll(/^import[^;]*?from '(\.[^']+)'/gm)]
      .map((m) => path.resolve(path.dirname(file), m[1] as string))
      .filter((target) => target.startsWith(`${src}${path.sep}`))
      .map(layerOf)
      .filter((layer) => layer !== 'paths' && LAYERS.indexOf(layer) < rank && layer !== layerOf(file));
    expect(upward).toEqual([]);
    if (rank === -1) return;
    // client/ is what the package exports; the service itself never needs it.
    expect(readFileSync(file, 'utf8')).not.toMatch(/from '\.\.?\/(\.\.\/)*client'/);
  });

  const clientFiles = files.filter((f) => layerOf(f) === 'client');
  test.each(clientFiles.map((f) => [path.relative(projectRoot, f), f]))(
    'when %s is read, then it imports only its siblings, openapi-fetch and types from generated/ (it runs in a browser, apart from the service)',
    (_name, file) => {
      const imports = [...readFileSync(file, 'utf8').matchAll(/^(import|export)( type)?[^;]*?from '([^']+)'/gm)];
      const foreign = imports.filter(([, , typeOnly, from = '']) => {
        if (from === 'openapi-fetch' || (from.startsWith('./') && !from.includes('/', 2))) return false;
        return !(typeOnly && from === '../../generated/openapi');
      });
      expect(foreign.map(([line]) => line)).toEqual([]);
    },
  );
});

for (const [name, root] of [
  ['src/', src],
  ['scripts/', path.join(projectRoot, 'scripts')],
] as const)
  describe(`the imports of ${name}`, () => {
    const within = sourceFiles(root);
    /** Every module a file imports, re-exports or requires, as files of the same tree (`./x` is x.ts or x/index.ts). */
    const importsOf = (file: string): string[] =>
      [...readFileSync(file, 'utf8').matchAll(/^(?:import|export)[^;]*?from '(\.[^']+)'|\brequire\('(\.[^']+)'\)/gm)]
        .map((m) => path.resolve(path.dirname(file), (m[1] ?? m[2]) as string))
        .map((target) => [`${target}.ts`, path.join(target, 'index.ts')].find((f) => existsSync(f)))
        .filter((target): target is string => target !== undefined && target.startsWith(`${root}${path.sep}`));

    test(`when the imports of ${name} are followed, then none leads back to the file it started from (no import circle)`, () => {
      const graph = new Map(within.map((file) => [file, importsOf(file)]));
      expect([...graph.values()].flat().length).toBeGreaterThan(100);
      const circles: string[] = [];
      const done = new Set<string>();
      const visit = (file: string, trail: string[]) => {
        const at = trail.indexOf(file);
        if (at !== -1) {
          circles.push([...trail.slice(at), file].map((f) => path.relative(root, f)).join(' → '));
          return;
        }
        if (done.has(file)) return;
        for (const next of graph.get(file) ?? []) visit(next, [...trail, file]);
        done.add(file);
      };
      for (const file of within) visit(file, []);
      expect(circles).toEqual([]);
    });
  });

/** Every function or method of `file` longer than `max` lines, as `file:line (n lines)`. */
function longFunctions(file: string, max: number): string[] {
  const long: string[] = [];
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      if (last - first + 1 > max) long.push(`${path.relative(projectRoot, file)}:${first + 1} (${last - first + 1} lines)`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return long;
}

describe('the functions of src/', () => {
  // A function that long has more than one job: it is split into steps, each a call.
  const MAX_LINES = 100;
  test(`when a function or method in src/ is measured, then none is longer than ${MAX_LINES} lines`, () => {
    expect(files.flatMap((file) => longFunctions(file, MAX_LINES))).toEqual([]);
  });

  test(`when a function or method in scripts/ is measured, then none is longer than ${MAX_LINES} lines`, () => {
    expect(sourceFiles(path.join(projectRoot, 'scripts')).flatMap((file) => longFunctions(file, MAX_LINES))).toEqual([]);
  });

  // The spec diff is read rule by rule: each comparison a step of its own.
  const MAX_SPEC_DIFF_LINES = 60;
  test(`when a function in scripts/spec-diff/ is measured, then none is longer than ${MAX_SPEC_DIFF_LINES} lines`, () => {
    expect(sourceFiles(path.join(projectRoot, 'scripts', 'spec-diff')).flatMap((file) => longFunctions(file, MAX_SPEC_DIFF_LINES))).toEqual(
      [],
    );
  });

  // Start-up reads as build, listen, stop: each a function that fits on a screen.
  const MAX_START_UP_LINES = 40;
  test(`when a function in main.ts is measured, then none is longer than ${MAX_START_UP_LINES} lines`, () => {
    expect(longFunctions(path.join(src, 'main.ts'), MAX_START_UP_LINES)).toEqual([]);
  });
});

describe('generated/', () => {
  test("when the handler registry is generated, then it imports the handlers of src/handlers/ and nothing else but the contract's handler types", () => {
    const file = path.join(projectRoot, 'generated', 'handlers.ts');
    const targets = [...readFileSync(file, 'utf8').matchAll(/^import( type)?[^;]*?from '(\.[^']+)'/gm)].map(
      (m) => `${m[1] ? 'type ' : ''}${path.relative(projectRoot, path.resolve(path.dirname(file), m[2] as string))}`,
    );
    expect(targets.length).toBeGreaterThan(1);
    const others = targets.filter((t) => !t.startsWith(`src${path.sep}handlers${path.sep}`));
    expect(others).toEqual([`type ${path.join('src', 'contract', 'handlers')}`]);
  });
});

describe('test/', () => {
  test('when a test file is in test/, then it is in the folder of its tier (unit, component, system), and helpers are in support/', () => {
    const tests = sourceFiles(path.join(projectRoot, 'test')).map((file) => path.relative(path.join(projectRoot, 'test'), file));
    const misplaced = tests.filter((file) => {
      const [top] = file.split(path.sep);
      return file.endsWith('.test.ts') ? !['unit', 'component', 'system'].includes(top as string) : top !== 'support';
    });
    expect(tests.length).toBeGreaterThan(40);
    expect(misplaced).toEqual([]);
  });

  test('when a test file is measured, then none is longer than 400 lines (split by family; generators and documents live in support/)', () => {
    const long = sourceFiles(path.join(projectRoot, 'test'))
      .filter((file) => file.endsWith('.test.ts') && readFileSync(file, 'utf8').split('\n').length > 400)
      .map((file) => path.relative(projectRoot, file));
    expect(long).toEqual([]);
  });

  test('when a test is named, then the name follows one pattern: "when …, then …"', () => {
    const titles = sourceFiles(path.join(projectRoot, 'test'))
      .filter((file) => file.endsWith('.test.ts'))
      .flatMap((file) =>
        [
          ...readFileSync(file, 'utf8').matchAll(
            /(?:\btest\(|\btest\.each\([^()]*\)\(|\]\)\(|\btest\.each\(\w+\)\(|\btest\.skip\)\()\s*(['"`])((?:\\.|(?!\1).)*)\1/g,
          ),
        ].map((m) => `${path.relative(projectRoot, file)}: ${m[2]}`),
      );
    expect(titles.length).toBeGreaterThan(200);
    expect(titles.filter((t) => !/\bwhen\b.*\bthen\b/.test(t))).toEqual([]);
  });
});

describe('scripts/', () => {
  const scripts = sourceFiles(path.join(projectRoot, 'scripts'));
  const importsOf = (file: string) =>
    [...readFileSync(file, 'utf8').matchAll(/^import[^;]*?from '(\.[^']+)'/gm)].map((m) =>
      path.resolve(path.dirname(file), m[1] as string),
    );

  test('when the request core is read, then it knows no express, no socket and no response object: its doors do', () => {
    const core = readFileSync(path.join(src, 'http', 'core.ts'), 'utf8');
    expect([...core.matchAll(/^import[^;]*?from '([^']+)'/gm)].map((m) => m[1])).not.toContain('express');
    const code = core.split('\n').filter((line) => !/^\s*(\*|\/\*\*|\/\/)/.test(line));
    expect(code.filter((line) => /\b(Request|Response|ServerResponse|IncomingMessage)\b|\b(req|res)\./.test(line))).toEqual([]);
  });

  test('when .ci/run is read, then it names no absolute path of one machine: what it needs beside the checkout is found relative to it', () => {
    const ci = readFileSync(path.join(projectRoot, '.ci', 'run'), 'utf8');
    expect(ci.split('\n').filter((line) => /(^|[\s"'=:(])\/(work|home|root|Users|srv|opt)\//.test(line))).toEqual([]);
  });

  test("when the bench's contestants are read, then they take nothing from src/ but through scripts/bench/shared.ts", () => {
    const contestants = ['baselines.ts', 'alternatives.ts', 'fastify.ts', 'plainStore.ts', 'checks.ts'];
    const reaching = contestants.flatMap((name) =>
      [...readFileSync(path.join(projectRoot, 'scripts', 'bench', name), 'utf8').matchAll(/from '([^']+)'/g)]
        .map((m) => m[1] as string)
        .filter((from) => from.includes('/src/'))
        .map((from) => `${name}: ${from}`),
    );
    expect(reaching).toEqual([]);
    expect(readFileSync(path.join(projectRoot, 'scripts', 'bench', 'shared.ts'), 'utf8')).toMatch(/from '\.\.\/\.\.\/src\//);
  });

  test('when scripts/ is listed, then it holds one folder per tool, each with its README, and nothing loose', () => {
    const entries = readdirSync(path.join(projectRoot, 'scripts'), { withFileTypes: true });
    expect(entries.filter((e) => !e.isDirectory() && e.name !== 'README.md').map((e) => e.name)).toEqual([]);
    const folders = entries.filter((e) => e.isDirectory()).map((e) => e.name);
    expect(folders.filter((name) => !existsSync(path.join(projectRoot, 'scripts', name, 'README.md')))).toEqual([]);
    // Every npm script run by ts-node runs a file in one of those folders.
    const { scripts: npmScripts } = JSON.parse(readFileSync(path.join(projectRoot, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    const entryPoints = Object.values(npmScripts).flatMap((command) =>
      [...command.matchAll(/\bscripts\/(\S+)\.ts\b/g)].map((m) => m[1] as string),
    );
    expect(entryPoints.length).toBeGreaterThan(8);
    expect(entryPoints.filter((file) => !folders.includes(file.split('/')[0] as string) || !file.includes('/'))).toEqual([]);
  });

  test('when a tool written in TypeScript is run by npm, then it ends through runTool (scripts/lib/tool.ts), as every tool does', () => {
    const { scripts: npmScripts } = JSON.parse(readFileSync(path.join(projectRoot, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    const entryPoints = [
      ...new Set(Object.values(npmScripts).flatMap((command) => [...command.matchAll(/\bscripts\/\S+\.ts\b/g)].map((m) => m[0]))),
    ];
    expect(entryPoints.length).toBeGreaterThan(8);
    expect(entryPoints.filter((file) => !/\brunTool\(/.test(readFileSync(path.join(projectRoot, file), 'utf8')))).toEqual([]);
  });

  test('when a script imports, then nothing comes from test/ (what both need lives in src/ or scripts/lib/)', () => {
    const offences = scripts.flatMap((file) =>
      importsOf(file)
        .filter((target) => target.startsWith(path.join(projectRoot, 'test')))
        .map((target) => `${path.relative(projectRoot, file)} → ${path.relative(projectRoot, target)}`),
    );
    expect(offences).toEqual([]);
  });

  test('when the contract checks run, then they do not load the app to check the handlers', () => {
    const offences = scripts
      .filter((file) => file.startsWith(path.join(projectRoot, 'scripts', 'contract', '')))
      .flatMap((file) =>
        importsOf(file)
          .filter((target) => target === path.join(src, 'app') || target === path.join(src, 'main'))
          .map((target) => `${path.relative(projectRoot, file)} → ${path.relative(projectRoot, target)}`),
      );
    expect(offences).toEqual([]);
  });
});

describe('libraries are used through their public API', () => {
  test("when any source is read, then none assigns to a library object's members or reads private symbols", () => {
    const offences = files.flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .map((line, i) => ({ line: line.trim(), at: `${path.relative(projectRoot, file)}:${i + 1}` }))
        .filter(
          ({ line }) =>
            // backend.router.x = …, api.validator.y = …, router.z = … (not ==, not =>)
            /\b(router|validator|backend|api)\.[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*\s*=(?![=>])/.test(line) ||
            // pino's internals, and any cast that reaches past a library type to its privates
            /pino\.symbols|Symbol\.for\('pino|as unknown as (Record<symbol|\{[^}]*\(\))/.test(line),
        )
        .map(({ at, line }) => `${at}: ${line}`),
    );
    expect(offences).toEqual([]);
  });

  test('when the request core has registered everything, then no method of openapi-backend, its router or its validator is shadowed', async () => {
    const spec = await loadSpec();
    const backend = await createBackend(spec);
    const authenticate = createAuthenticator({ bootstrapKeys: ['k'.repeat(16)], scopes: spec.scopes });
    new RequestCore({ spec, backend, handlers: await createMockHandlers(spec), authenticate });
    const shadowed = (object: object) => {
      const methods = new Set<string>();
      for (let proto = Object.getPrototypeOf(object); proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
        for (const name of Object.getOwnPropertyNames(proto)) if (name !== 'constructor') methods.add(name);
      }
      return Object.getOwnPropertyNames(object).filter((name) => methods.has(name));
    };
    expect({ backend: shadowed(backend), router: shadowed(backend.router), validator: shadowed(backend.validator) }).toEqual({
      backend: [],
      router: [],
      validator: [],
    });
  });
});
