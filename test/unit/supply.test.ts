import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { type AuditJson, judge, listedExceptions } from '../../scripts/supply/audit';
import { lockedPackageName } from '../../scripts/supply/sbom';
import { projectRoot } from '../../src/paths';
import { dockerfile, imageNodeVersion } from '../support/docker';

// What ships, read from the tree: the install-script allow-list, the advisories judged, and the
// Node.js release named alike by the image, engines, the CI example and the docs.
const read = (file: string) => readFileSync(path.join(projectRoot, file), 'utf8');
const pkg = JSON.parse(read('package.json')) as { engines: { node: string }; allowScripts: Record<string, boolean> };
const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { hasInstallScript?: boolean }> };
const operations = read('docs/operations.md');
const major = imageNodeVersion.split('.')[0]!;

describe('install scripts', () => {
  const withScripts = Object.entries(lock.packages)
    .filter(([where, p]) => where !== '' && p.hasInstallScript)
    .map(([where]) => lockedPackageName(where));

  test("when the lock file's packages with install scripts are listed, then allowScripts names exactly those, and telemetry is denied", () => {
    expect(withScripts.length).toBeGreaterThan(0);
    expect(Object.keys(pkg.allowScripts).sort()).toEqual([...new Set(withScripts)].sort());
    expect(pkg.allowScripts['@scarf/scarf']).toBe(false);
  });

  test('when allowScripts names a package, then docs/operations.md gives its script, the decision and the reason', () => {
    for (const [name, allowed] of Object.entries(pkg.allowScripts)) {
      const row = operations.split('\n').find((l) => l.startsWith(`| \`${name}\``));
      expect(row).toBeDefined();
      const [, script, decision, why] = row!.split(' | ').map((c) => c.trim());
      expect(script).toMatch(/^`(preinstall|install|postinstall): .+`$/);
      expect(decision).toBe(allowed ? 'yes' : 'no');
      expect(why!.length).toBeGreaterThan(20);
    }
  });

  test('when npm installs, then an install script nobody reviewed fails the install (.npmrc), and the patches are still applied', () => {
    expect(read('.npmrc')).toMatch(/^strict-allow-scripts=true$/m);
    expect(JSON.parse(read('package.json')).scripts.postinstall).toMatch(/^patch-package /);
  });
});

describe('npm audit, judged', () => {
  const report = (via: (object | string)[], severity = 'high'): AuditJson => ({
    vulnerabilities: { express: { name: 'express', severity, via } },
    metadata: { vulnerabilities: { info: 0, low: 0, moderate: 0, high: 1, critical: 0, total: 1 } },
  });
  const advisory = { source: 1, title: 'Open redirect', url: 'https://github.com/advisories/GHSA-aaaa-bbbb-cccc', severity: 'high' };

  test('when a high advisory is not listed in docs/operations.md, then it fails, naming it; once listed (URL or id), it passes', () => {
    expect(judge(report([advisory]), [])).toMatchObject({
      kind: 'checked',
      unlisted: [expect.stringContaining('express: Open redirect (high')],
    });
    expect(judge(report([advisory]), ['https://github.com/advisories/GHSA-aaaa-bbbb-cccc'])).toMatchObject({
      unlisted: [],
      listed: [expect.any(String)],
    });
    expect(judge(report([advisory]), ['GHSA-aaaa-bbbb-cccc'])).toMatchObject({ unlisted: [] });
  });

  test('when only moderate advisories, or one reached through another package (a name), are reported, then nothing is serious', () => {
    expect(judge(report([{ ...advisory, severity: 'moderate' }], 'moderate'), [])).toMatchObject({ unlisted: [], listed: [] });
    expect(judge(report(['body-parser']), [])).toMatchObject({ unlisted: [] });
  });

  test('when the advisory service refuses (the error npm prints), then the verdict is unreachable with its reason, never a pass', () => {
    const refused = {
      message: '405 Method Not Allowed - POST https://registry.npmjs.org/-/npm/v1/security/advisories/bulk',
      statusCode: 405,
    };
    expect(judge(refused, [])).toEqual({ kind: 'unreachable', reason: refused.message });
    expect(judge({}, [])).toEqual({ kind: 'unreachable', reason: 'npm audit gave no report' });
  });

  test("when docs/operations.md's Known vulnerabilities table is read, then its advisories are the exceptions (none today)", () => {
    expect(listedExceptions(operations)).toEqual([]);
    const doc =
      '## Known vulnerabilities\n\n| package | advisory | why |\n| --- | --- | --- |\n| `x` | <https://github.com/advisories/GHSA-1111-2222-3333> | Not reachable. |\n| `y` | GHSA-4444-5555-6666 | No. |\n\n## Next\n| `z` | GHSA-7777-8888-9999 | Elsewhere. |\n';
    expect(listedExceptions(doc)).toEqual(['https://github.com/advisories/GHSA-1111-2222-3333', 'GHSA-4444-5555-6666']);
  });
});

describe('the Node.js release', () => {
  test('when the Dockerfile is read, then every Node stage is that release, the final stage is Debian with node alone, and no line needs a registry', () => {
    const froms = dockerfile.match(/^FROM .+$/gm) ?? [];
    expect(froms).toEqual([
      'FROM node:${NODE_VERSION}-bookworm-slim AS deps',
      'FROM node:${NODE_VERSION}-bookworm-slim AS build',
      'FROM debian:bookworm-slim',
    ]);
    expect(dockerfile).not.toMatch(/^# *syntax=/m);
    expect(dockerfile).toContain('COPY --from=deps /usr/local/bin/node /usr/local/bin/node');
  });

  test("when engines, the CI example and the docs are read, then each names the image's major line", () => {
    expect(major).toMatch(/^(24|26)$/);
    expect(pkg.engines.node.split('||').map((r) => r.trim())).toContain(`^${major}.0.0`);
    const workflow = parse(read('.github/workflows/contract.yml')) as {
      jobs: Record<string, { steps: { with?: { 'node-version'?: string | number } }[] }>;
    };
    const versions = Object.values(workflow.jobs).flatMap((j) =>
      j.steps.flatMap((s) => (s.with?.['node-version'] ? [String(s.with['node-version'])] : [])),
    );
    expect(versions).toEqual([major]);
    expect(read('README.md')).toContain(`Node.js ${major}`);
    expect(operations).toContain(`### Runtime: Node.js ${major}`);
  });
});
