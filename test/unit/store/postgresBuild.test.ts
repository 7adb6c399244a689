import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../../src/paths';

// postgres.js's patches change its ES module source only (patches/README.md); the CommonJS build the
// service loads and the Cloudflare one are made from it at install by upstream's transpile scripts
// (patches/postgres/build.cjs). A build edited by hand, or an install that skipped the rebuild, is a
// fork nobody tests: upstream's suite runs on what is installed (npm run test:driver).

describe("postgres.js's builds", () => {
  test('when the installed builds are compared with a rebuild of the patched source, then not a byte differs', () => {
    const check = spawnSync(process.execPath, [path.join(projectRoot, 'patches', 'postgres', 'build.cjs'), '--check'], {
      encoding: 'utf8',
    });
    expect(check.stderr).toBe('');
    expect(check.status).toBe(0);
  });

  test('when the patches are read, then each changes only the source and its types, never a build', () => {
    const patches = readdirSync(path.join(projectRoot, 'patches')).filter((f) => f.startsWith('postgres+'));
    expect(patches.length).toBeGreaterThan(0);
    const touched = patches.flatMap((f) =>
      [...readFileSync(path.join(projectRoot, 'patches', f), 'utf8').matchAll(/^\+\+\+ b\/node_modules\/postgres\/(\S+)$/gm)].map(
        (m) => m[1],
      ),
    );
    expect(touched.filter((file) => !/^(src\/[\w.]+\.js|types\/index\.d\.ts)$/.test(file!))).toEqual([]);
  });
});
