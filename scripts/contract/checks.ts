/**
 * The contract checks `npm run contract` runs, each returning what failed and what to do.
 * They take the spec file as a parameter so that tests can check edited copies.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { basePathOfUrl } from '../../src/contract/basePath';
import { projectRoot } from '../../src/paths';
import { pendingChanges, planGeneration } from '../generate/generate';
import { type Change, loadDocument } from '../spec-diff';
import { readAccepted } from '../spec-diff/accepted';
import { gate } from '../spec-diff/gate';
import { policyBeside } from '../spec-diff/policy';
import { counts, formatChanges } from '../spec-diff/report';

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
 * Spectral with spectral:oas and the OWASP API Security Top 10 2023 ruleset, by
 * spec/.spectral.yaml (or the .spectral.yaml beside the spec checked): fails on any error,
 * and shows the warnings too.
 */
export function spectralLint(specFile: string): CheckResult {
  const projectRuleset = path.join(projectRoot, 'spec', '.spectral.yaml');
  const beside = path.join(path.dirname(specFile), '.spectral.yaml');
  // The exceptions name files relative to the ruleset: a spec elsewhere (a copy being checked)
  // gets a copy of ours beside it for the run, its rulesets named by their installed paths.
  let ruleset = existsSync(beside) ? beside : projectRuleset;
  let temporary: string | undefined;
  if (ruleset === projectRuleset && path.dirname(path.resolve(specFile)) !== path.dirname(projectRuleset)) {
    temporary = path.join(path.dirname(specFile), `.spectral.${process.pid}.yaml`);
    const owasp = require.resolve('@stoplight/spectral-owasp-ruleset', { paths: [projectRoot] });
    writeFileSync(temporary, readFileSync(projectRuleset, 'utf8').replace("'@stoplight/spectral-owasp-ruleset'", JSON.stringify(owasp)));
    ruleset = temporary;
  }
  let r: { status: number | null; output: string };
  try {
    r = run(bin('spectral'), ['lint', specFile, '--ruleset', ruleset, '--format', 'text', '--fail-severity', 'error', '--quiet']);
  } finally {
    if (temporary) rmSync(temporary, { force: true });
  }
  if (temporary) ruleset = projectRuleset;
  const findings = r.output
    .split('\n')
    .filter((l) => /\b(error|warning)\b/.test(l) && !/npm warn/.test(l))
    .map((l) => l.replace(`${path.dirname(specFile)}${path.sep}`, ''));
  if (r.status === 0)
    return {
      name: 'owasp',
      ok: true,
      detail: `${rel(specFile)} passes spectral:oas and the OWASP API Security ruleset (${rel(ruleset)})${findings.length ? `, with warnings:\n${findings.join('\n')}` : ''}`,
    };
  return {
    name: 'owasp',
    ok: false,
    detail: `${findings.join('\n') || r.output}\n→ fix the contract where Spectral points; an exception goes in ${rel(ruleset)}, for that path only, with its reason`,
  };
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
  /** Indexes of the spec/accepted-changes.yaml entries that matched a change. */
  acceptedUsed?: number[];
}

/** spec/accepted-changes.yaml beside the spec. */
export const acceptedFileFor = (specFile: string) => path.join(path.dirname(specFile), 'accepted-changes.yaml');

/**
 * Against the last released contract: an error-level change (breaking, and not listed in
 * spec/accepted-changes.yaml) needs a new major version, and the major version and the
 * /vN base path move together. An accepted-changes entry that has expired or matches
 * nothing fails too.
 */
export async function checkRelease(specFile: string, dir = releasedDir, today = new Date()): Promise<ReleaseCheck> {
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
  const acceptedFile = acceptedFileFor(specFile);
  // The same gate as the pull request's spec diff (scripts/spec-diff/gate.ts), in the release's scope.
  const policy = policyBeside(specFile);
  const {
    changes,
    off,
    problems,
    used,
    failing: breaking,
  } = gate(released, doc, {
    today,
    ...(policy ? { policy } : {}),
    accepted: { entries: readAccepted(acceptedFile), file: rel(acceptedFile) },
    scope: 'release',
  });
  // Errors and warnings in full; the info findings counted (npm run spec:diff lists them).
  const shown = changes.filter((c) => c.level !== 'info');
  const report =
    changes.length || problems.length
      ? `\n${shown.length || problems.length ? `${formatChanges(shown, 'text', { problems }).replace(/\n[^\n]*$/, '')}\n` : ''}${counts(changes, off)} (\`npm run spec:diff -- spec/released/${latest.text}.yaml ${rel(specFile)}\` lists the info findings too)`
      : '';
  const compared = { name, changes, version, latest };
  if (problems.length > 0)
    return {
      ...compared,
      ok: false,
      detail: `${problems.length} problem(s) with ${rel(acceptedFile)}:${report}\n→ ${problems.map((p) => p.replace(/^.*?: /, '')).join('\n→ ')}`,
    };
  if (breaking.length > 0 && version.major <= latest.major) {
    const next = latest.major + 1;
    return {
      ...compared,
      ok: false,
      acceptedUsed: used,
      detail: `${breaking.length} breaking change(s) against the released ${latest.text}:${report}\n→ restore what the released contract promised (spec/released/${latest.text}.yaml), make a new major version (info.version ${next}.0.0 and every server URL ending in /v${next}), or list the change in ${rel(acceptedFile)} with a reason and an expiry date`,
    };
  }
  return {
    ...compared,
    ok: true,
    acceptedUsed: used,
    detail:
      changes.length === 0
        ? `identical in substance to the released ${latest.text}`
        : `${breaking.length ? `a new major version (${version.text}) over ${latest.text}` : `compatible with the released ${latest.text}`}${report}`,
  };
}
