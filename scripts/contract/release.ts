/**
 * npm run contract:release: records spec/openapi.yaml as spec/released/<info.version>.yaml,
 * the contract later versions are checked against, and appends the release's changes,
 * grouped by level, to spec/CHANGELOG.md. Refuses a version that is already released with
 * other content, and a breaking change without a new major version (or an entry in
 * spec/accepted-changes.yaml); the entries the release consumed are removed from that file.
 * Beside each released spec, `<version>.sbom.cdx.json`: the bill of materials of the production
 * dependencies it shipped with (npm run sbom), written when the spec is released. The
 * changelog's `## Unreleased` section, written by hand as changes land (what was added, in
 * words), becomes the release's: its text goes under the release's heading, before the list.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { specPath } from '../../src/paths';
import { acceptedFileFor, checkRelease, releasedDir } from './checks';
import { removeAccepted } from '../spec-diff/accepted';
import { changelog } from '../spec-diff/report';
import { runTool } from '../lib/tool';
import { writeSbom } from '../supply/sbom';

/** The SBOM kept beside a released spec file. */
export const sbomFor = (releasedSpec: string) => releasedSpec.replace(/\.yaml$/, '.sbom.cdx.json');

export const changelogPath = path.join(path.dirname(specPath), 'CHANGELOG.md');

const UNRELEASED = /\n## Unreleased\n([\s\S]*)$/;

/** The changelog with `section` (a release's: its heading, then its list) appended, taking up the `## Unreleased` text if there is one. */
export function withRelease(text: string, section: string): string {
  const unreleased = UNRELEASED.exec(text);
  if (!unreleased) return `${text}${section}\n`;
  const [heading = '', ...list] = section.split('\n');
  const words = (unreleased[1] ?? '').trim();
  const released = [heading, '', ...(words ? [words, ''] : []), ...list.slice(1)].join('\n');
  return `${text.slice(0, unreleased.index)}\n${released}\n`;
}

async function main(): Promise<number> {
  const today = new Date();
  const check = await checkRelease(specPath, releasedDir, today);
  if (!check.ok || !check.version) {
    process.stderr.write(`not released: ${check.detail}\n`);
    return 1;
  }
  const target = path.join(releasedDir, `${check.version.text}.yaml`);
  if (existsSync(target)) {
    if (readFileSync(target, 'utf8') === readFileSync(specPath, 'utf8')) {
      process.stdout.write(`${check.version.text} is already released as ${path.relative(process.cwd(), target)}\n`);
      return 0;
    }
    process.stderr.write(
      `not released: ${check.version.text} was released with other content\n→ raise info.version (a new minor for additions, a new major with a new /vN for breaking changes)\n`,
    );
    return 1;
  }
  mkdirSync(releasedDir, { recursive: true });
  copyFileSync(specPath, target);
  const sbom = writeSbom(sbomFor(target));
  const section = changelog(
    check.changes,
    `${check.version.text} (${today.toISOString().slice(0, 10)})${check.latest ? `, after ${check.latest.text}` : ''}`,
  );
  const before = existsSync(changelogPath)
    ? readFileSync(changelogPath, 'utf8')
    : "# Contract changelog\n\nWritten by `npm run contract:release`: each release's changes against the one before, grouped by level.\n\n";
  writeFileSync(changelogPath, withRelease(before, section));
  removeAccepted(acceptedFileFor(specPath), check.acceptedUsed ?? []);
  process.stdout.write(
    `released ${check.version.text} as ${path.relative(process.cwd(), target)}${check.latest ? ` (after ${check.latest.text})` : ''}; its changes are appended to ${path.relative(process.cwd(), changelogPath)}${check.acceptedUsed?.length ? `; ${check.acceptedUsed.length} entry(ies) of spec/accepted-changes.yaml consumed and removed` : ''}\n`,
  );
  process.stdout.write(`its bill of materials: ${sbom}\n`);
  return 0;
}

runTool('contract:release failed', () => main());
