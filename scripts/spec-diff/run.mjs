// npm run spec:diff: the spec diff as compiled JavaScript, started by node alone (no ts-node).
// The spec diff is a TypeScript project of its own (tsconfig.build.json here: cli.ts and what it
// imports), built apart from the service into dist/spec-diff/ with `tsc -b` (`npm run build:spec-diff`),
// here on first use, and again whenever one of its sources is newer than the last build. The
// check reads modification times only, so a run that needs no build starts no compiler.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import module, { createRequire } from 'node:module';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const out = path.join(root, 'dist', 'spec-diff');
const built = path.join(out, 'scripts', 'spec-diff', 'cli.js');
// Written after each build: tsc -b leaves an output untouched when its text did not change.
const stamp = path.join(out, '.built');

/** The newest modification time of the TypeScript sources (and tsconfig files) under `dir`. */
function newest(dir) {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) latest = Math.max(latest, newest(file));
    else if (entry.name.endsWith('.ts') || entry.name.endsWith('.json')) latest = Math.max(latest, statSync(file).mtimeMs);
  }
  return latest;
}

// Its sources: this folder, the tools' shared end (scripts/lib) and the few modules of src/ it shares.
const stale = () =>
  !existsSync(built) ||
  !existsSync(stamp) ||
  statSync(stamp).mtimeMs <
    Math.max(
      newest(here),
      newest(path.join(root, 'scripts', 'lib')),
      newest(path.join(root, 'src')),
      statSync(path.join(root, 'tsconfig.json')).mtimeMs,
    );

// `--build`: build if stale, and run nothing (npm run build:spec-diff).
const buildOnly = process.argv[2] === '--build';
if (stale()) {
  process.stderr.write('spec:diff: building (once, until a source changes)…\n');
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const r = spawnSync(process.execPath, [tsc, '-b', path.join(here, 'tsconfig.build.json')], { stdio: 'inherit' });
  if (r.status !== 0) process.exit(2);
  writeFileSync(stamp, `${new Date().toISOString()}\n`);
}
// Node's compile cache (22.1 and later) keeps the compiled code of the modules it loads: a cold start
// then parses none of them again (measured by npm run bench:spec-diff).
if (!buildOnly) {
  module.enableCompileCache?.(path.join(out, '.cache'));
  createRequire(import.meta.url)(built);
}
