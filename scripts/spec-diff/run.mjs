// npm run spec:diff: the spec diff as compiled JavaScript, started by node alone (no ts-node).
// It is built into dist/ by `npm run build` (`--build`), or here on first use, and again whenever a source
// under scripts/spec-diff/ or src/ is newer than the last build (a stamp file marks it).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const built = path.join(root, 'dist', 'scripts', 'spec-diff', 'cli.js');
const stamp = path.join(root, 'dist', 'scripts', 'spec-diff', '.built');

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

const stale = () =>
  !existsSync(built) ||
  !existsSync(stamp) ||
  statSync(stamp).mtimeMs < Math.max(newest(here), newest(path.join(root, 'src')), statSync(path.join(root, 'tsconfig.json')).mtimeMs);

// `--build`: build if stale, and run nothing (npm run build).
const buildOnly = process.argv[2] === '--build';
if (stale()) {
  process.stderr.write('spec:diff: building (once, until a source changes)…\n');
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const r = spawnSync(process.execPath, [tsc, '-p', path.join(here, 'tsconfig.build.json')], { stdio: 'inherit' });
  if (r.status !== 0) process.exit(2);
  writeFileSync(stamp, `${new Date().toISOString()}\n`);
}
if (!buildOnly) createRequire(import.meta.url)(built);
