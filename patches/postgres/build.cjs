// postgres.js's CommonJS build (cjs/src, the one Node loads for `require('postgres')`) and its
// Cloudflare build (cf/src), made from its ES module source (src/, which the patches change) by
// upstream's own transpile scripts (upstream/transpile.cjs and upstream/transpile.cf.js, as
// postgres.js's `npm run build` runs them), so that no build is ever edited by hand and none drifts
// from the source. Run by `postinstall` after patch-package.
//
//   node patches/postgres/build.cjs           rebuilds node_modules/postgres/{cjs,cf}/src
//   node patches/postgres/build.cjs --check   exits 1, naming each file, when they differ from a rebuild
const { execFileSync } = require('node:child_process');
const { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const path = require('node:path');
const process = require('node:process');

const installed = path.join(__dirname, '..', '..', 'node_modules', 'postgres');
const upstream = path.join(__dirname, 'upstream');
const BUILDS = ['cjs/src', 'cf/src'];

/** The builds of `installed`'s src/, made in a folder laid out as upstream's checkout: returns that folder. */
function build() {
  const stage = mkdtempSync(path.join(tmpdir(), 'postgres-build-'));
  cpSync(path.join(installed, 'src'), path.join(stage, 'src'), { recursive: true });
  // transpile.cf.js is an ES module: it is read as one through the package's `"type": "module"`.
  cpSync(path.join(installed, 'package.json'), path.join(stage, 'package.json'));
  // transpile.cjs also transpiles the tests; the install needs only the sources.
  mkdirSync(path.join(stage, 'tests'));
  mkdirSync(path.join(stage, 'cf'));
  for (const script of ['transpile.cjs', 'transpile.cf.js']) {
    cpSync(path.join(upstream, script), path.join(stage, script));
    execFileSync(process.execPath, [script], { cwd: stage, stdio: 'inherit' });
  }
  return stage;
}

/** The files of `dir`, by name. */
const filesOf = (dir) => (existsSync(dir) ? readdirSync(dir).sort() : []);

function main() {
  if (!existsSync(path.join(installed, 'src'))) throw new Error(`no postgres.js source in ${installed}`);
  const stage = build();
  try {
    const differing = [];
    for (const dir of BUILDS) {
      const made = path.join(stage, dir);
      const target = path.join(installed, dir);
      const names = [...new Set([...filesOf(made), ...filesOf(target)])];
      for (const name of names) {
        const wanted = existsSync(path.join(made, name)) ? readFileSync(path.join(made, name)) : undefined;
        const present = existsSync(path.join(target, name)) ? readFileSync(path.join(target, name)) : undefined;
        if (wanted && present && wanted.equals(present)) continue;
        differing.push(`${dir}/${name}`);
        if (process.argv.includes('--check')) continue;
        if (wanted) writeFileSync(path.join(target, name), wanted);
        else rmSync(path.join(target, name));
      }
    }
    if (process.argv.includes('--check')) {
      if (differing.length) {
        process.stderr.write(`postgres.js's builds differ from its source: ${differing.join(', ')} (node patches/postgres/build.cjs rebuilds them)\n`);
        process.exitCode = 1;
      }
    } else process.stdout.write(`postgres.js: ${BUILDS.join(' and ')} built from src/ (${differing.length} files changed)\n`);
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

main();
