/**
 * npm run contract:release: records spec/openapi.yaml as spec/released/<info.version>.yaml,
 * the contract later versions are checked against. Refuses a version that is already
 * released with other content, and a breaking change without a new major version.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { specPath } from '../src/paths';
import { checkRelease, releasedDir } from './contract/checks';

async function main(): Promise<number> {
  const check = await checkRelease(specPath);
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
  process.stdout.write(
    `released ${check.version.text} as ${path.relative(process.cwd(), target)}${check.latest ? ` (after ${check.latest.text})` : ''}\n`,
  );
  return 0;
}

void main().then((code) => process.exit(code));
