/**
 * npm run sbom [-- --out FILE]: the bill of materials of what ships, as CycloneDX JSON: the
 * production dependencies of package-lock.json, as `npm sbom` lists them, written to FILE
 * (default dist/sbom.cdx.json). `npm run contract:release` keeps one beside each released spec.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../src/paths';
import { runTool } from '../lib/tool';

export interface SbomComponent {
  name: string;
  version: string;
  purl?: string;
  scope?: string;
}

export interface Sbom {
  bomFormat: string;
  specVersion: string;
  metadata: { timestamp: string; component: { name: string; version: string; purl?: string } };
  components: SbomComponent[];
}

/** The package a lock file's `packages` key installs: `node_modules/a/node_modules/@s/b` → `@s/b`. */
export const lockedPackageName = (where: string) => where.slice(where.lastIndexOf('node_modules/') + 'node_modules/'.length);

/** name@version of every package the lock file installs without --omit=dev's leaving it out. */
function productionPackages(root: string): Set<string> {
  const lock = JSON.parse(readFileSync(path.join(root, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { version?: string; dev?: boolean; devOptional?: boolean }>;
  };
  const kept = new Set<string>();
  for (const [where, p] of Object.entries(lock.packages))
    if (where !== '' && !p.dev && !p.devOptional) kept.add(`${lockedPackageName(where)}@${p.version}`);
  return kept;
}

/**
 * The CycloneDX SBOM of `root`'s production dependencies, from its lock file alone (no
 * node_modules needed): npm's SBOM of every package, kept to those the lock file does not mark
 * dev. (`npm sbom --omit dev` itself leaves out most of them: with npm 11.19, 58 of 197, express
 * among the missing.) npm names the root component after its folder (a clone's directory): it is
 * named as the package is.
 */
export function productionSbom(root = projectRoot): Sbom {
  const args = ['sbom', '--sbom-format', 'cyclonedx', '--package-lock-only'];
  const result = spawnSync('npm', args, { cwd: root, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (result.status !== 0) throw new Error(`npm ${args.join(' ')} failed (exit ${result.status}): ${result.stderr.trim()}`);
  const bom = JSON.parse(result.stdout) as Sbom & { dependencies?: { ref: string; dependsOn?: string[] }[] };
  if (bom.bomFormat !== 'CycloneDX' || !Array.isArray(bom.components) || !bom.metadata?.component)
    throw new Error(`npm ${args.join(' ')} wrote no CycloneDX document`);
  const shipped = productionPackages(root);
  bom.components = bom.components.filter((c) => shipped.has(`${c.name}@${c.version}`));
  const refs = new Set([
    ...bom.components.map((c) => (c as { 'bom-ref'?: string })['bom-ref']),
    (bom.metadata.component as { 'bom-ref'?: string })['bom-ref'],
  ]);
  bom.dependencies = bom.dependencies
    ?.filter((d) => refs.has(d.ref))
    .map((d) => ({ ...d, dependsOn: d.dependsOn?.filter((r) => refs.has(r)) }));
  const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { name: string };
  bom.metadata.component.name = pkg.name;
  return bom;
}

/** Writes the SBOM to `file` (folders made), and says what it holds. */
export function writeSbom(file: string, root = projectRoot): string {
  const bom = productionSbom(root);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(bom, null, 2)}\n`);
  const { name, version } = bom.metadata.component;
  return `${path.relative(process.cwd(), file)}: CycloneDX ${bom.specVersion}, ${name}@${version} and its ${bom.components.length} production dependencies`;
}

function main(): number {
  const args = process.argv.slice(2);
  const at = args.indexOf('--out');
  if (at !== -1 && !args[at + 1]) throw new Error('--out needs a file name');
  const out = path.resolve(at === -1 ? path.join(projectRoot, 'dist', 'sbom.cdx.json') : args[at + 1]!);
  process.stdout.write(`${writeSbom(out)}\n`);
  return 0;
}

if (require.main === module) runTool('sbom failed', () => Promise.resolve().then(main));
