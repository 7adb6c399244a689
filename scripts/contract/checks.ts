/**
 * The contract checks `npm run contract` runs, each returning what failed and what to do.
 * They take the spec file as a parameter so that tests can check edited copies.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { basePathOfUrl } from '../../src/contract/spec';
import { projectRoot } from '../../src/paths';
import { pendingChanges, planGeneration } from '../lib/generate';
import { type Change, diffDocuments, formatChanges, loadDocument } from './diff';

export interface CheckResult {
  name: string;
  ok: boolean;
  /** What was found, and on failure what to do next. */
  detail: string;
}

export const releasedDir = path.join(projectRoot, 'spec', 'released');
const bin = (name: string) => path.join(projectRoot, 'node_modules', '.bin', name);
const rel = (file: string) => path.relative(projectRoot, file) || file;

function run(command: string, args: string[]) {
  const r = spawnSync(command, args, {
    cwd: projectRoot,
    encoding: 'utf8',
    env: { ...process.env, REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', REDOCLY_TELEMETRY: 'off' },
  });
  return { status: r.status, output: `${r.stdout ?? ''}${r.stderr ?? ''}`.trim() };
}

export function lintSpec(specFile: string): CheckResult {
  const r = run(bin('redocly'), ['lint', specFile, '--config', path.join(projectRoot, 'spec', 'redocly.yaml'), '--format=stylish']);
  const problems = r.output.split('\n').filter((l) => /\b(error|warning)\b/.test(l) && !/Node\.js|deprecat/i.test(l));
  return r.status === 0
    ? { name: 'lint', ok: true, detail: `${rel(specFile)} passes the rules in spec/redocly.yaml` }
    : { name: 'lint', ok: false, detail: `${problems.join('\n')}\n→ fix the spec where the linter points (rules: spec/redocly.yaml)` };
}

/**
 * generated/ is what `npm run generate` makes of the spec today, and every operation of the
 * spec has a handler (a generated stub counts: it answers 501); stubs are named.
 */
export async function checkGenerated(specFile: string, root = projectRoot): Promise<CheckResult[]> {
  const plan = await planGeneration(specFile, root);
  const pending = pendingChanges(plan);
  const stale = pending.filter((f) => f.kind === 'generated').map((f) => f.file);
  const missing = pending.filter((f) => f.kind === 'scaffold' && f.file.startsWith('src/')).map((f) => f.file);
  const stubs = plan.operations
    .map((o) => o.operationId)
    .filter(
      (id) =>
        !missing.includes(`src/handlers/${id}.ts`) &&
        /= notImplemented\(/.test(readFileSync(path.join(root, 'src', 'handlers', `${id}.ts`), 'utf8')),
    );
  const orphans = plan.orphans.length ? `\nnot registered (no operation of the spec): ${plan.orphans.join(', ')}` : '';
  return [
    stale.length === 0
      ? { name: 'generated', ok: true, detail: 'generated/openapi.ts and generated/handlers.ts match the spec' }
      : {
          name: 'generated',
          ok: false,
          detail: `stale for the spec: ${stale.join(', ')}\n→ run \`npm run generate\`, then fix what no longer compiles (\`npm run typecheck\`) and commit both`,
        },
    missing.length === 0
      ? {
          name: 'handlers',
          ok: true,
          detail: `every operation has a handler${stubs.length ? ` (still stubs answering 501: ${stubs.join(', ')})` : ''}: ${plan.operations.map((o) => o.operationId).join(', ')}${orphans}`,
        }
      : {
          name: 'handlers',
          ok: false,
          detail: `no handler for: ${missing.join(', ')}${orphans}\n→ run \`npm run generate\` to write a stub for each, then fill it in`,
        },
  ];
}

interface Version {
  major: number;
  minor: number;
  patch: number;
  text: string;
}

function parseVersion(text: string): Version | undefined {
  const m = /^(\d+)\.(\d+)\.(\d+)$/.exec(text);
  return m ? { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3]), text } : undefined;
}

const compareVersions = (a: Version, b: Version) => a.major - b.major || a.minor - b.minor || a.patch - b.patch;

function releasedVersions(dir = releasedDir): Version[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .map((f) => /^(.+)\.yaml$/.exec(f)?.[1])
    .map((v) => (v ? parseVersion(v) : undefined))
    .filter((v): v is Version => v !== undefined)
    .sort(compareVersions);
}

export interface ReleaseCheck extends CheckResult {
  changes: Change[];
  version?: Version;
  latest?: Version;
}

/**
 * Against the last released contract: a breaking change needs a new major version, and
 * the major version and the /vN base path move together.
 */
export async function checkRelease(specFile: string, dir = releasedDir, today?: Date): Promise<ReleaseCheck> {
  const name = 'release compatibility';
  const doc = (await loadDocument(specFile)) as { info: { version?: unknown }; servers?: { url: string }[] };
  const version = parseVersion(String(doc.info.version));
  if (!version)
    return {
      name,
      ok: false,
      changes: [],
      detail: `info.version ${JSON.stringify(doc.info.version)} is not MAJOR.MINOR.PATCH\n→ write a version such as 1.1.0`,
    };
  const servers = (doc.servers ?? []).map((s) => basePathOfUrl(s.url));
  const wrongBase = servers.filter((p) => p !== `/v${version.major}`);
  if (servers.length === 0 || wrongBase.length > 0) {
    return {
      name,
      ok: false,
      changes: [],
      version,
      detail: `info.version is ${version.text}, so every server URL must end in /v${version.major}; found ${servers.join(', ') || 'no servers'}\n→ move info.version's major and the /vN base path together`,
    };
  }
  const latest = releasedVersions(dir).at(-1);
  if (!latest)
    return { name, ok: true, changes: [], version, detail: 'no released contract yet: record one with `npm run contract:release`' };
  if (compareVersions(version, latest) < 0) {
    return {
      name,
      ok: false,
      changes: [],
      version,
      latest,
      detail: `info.version ${version.text} is older than the released ${latest.text}\n→ set info.version to ${latest.text} or later`,
    };
  }
  const released = await loadDocument(path.join(dir, `${latest.text}.yaml`));
  const changes = diffDocuments(released, doc, { today });
  const breaking = changes.filter((c) => c.class === 'breaking');
  const report = changes.length ? `\n${formatChanges(changes, 'text')}` : '';
  if (breaking.length > 0 && version.major <= latest.major) {
    const next = latest.major + 1;
    return {
      name,
      ok: false,
      changes,
      version,
      latest,
      detail: `${breaking.length} breaking change(s) against the released ${latest.text}:${report}\n→ restore what the released contract promised (spec/released/${latest.text}.yaml), or make a new major version: info.version ${next}.0.0 and every server URL ending in /v${next}`,
    };
  }
  return {
    name,
    ok: true,
    changes,
    version,
    latest,
    detail:
      changes.length === 0
        ? `identical in substance to the released ${latest.text}`
        : `${breaking.length ? `a new major version (${version.text}) over ${latest.text}` : `compatible with the released ${latest.text}`}${report}`,
  };
}
