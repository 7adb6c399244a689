/**
 * npm run audit:prod: `npm audit --omit=dev` on what ships, judged. Exit 0 when no high or
 * critical advisory applies to a production dependency, or each one is listed, with why it does
 * not apply, in docs/operations.md ("Known vulnerabilities"); 1 when one is not; 3 when the
 * registry's advisory service cannot be reached (nothing was checked: said so, never a pass).
 * With AUDIT_REQUIRED=1 an unreachable service is a failure (1) too.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../src/paths';
import { runTool } from '../lib/tool';

export const EXIT_UNREACHABLE = 3;
const SERIOUS = new Set(['high', 'critical']);
export const exceptionsFile = path.join(projectRoot, 'docs', 'operations.md');

interface Advisory {
  source?: number;
  title?: string;
  url?: string;
  severity?: string;
}
/** npm audit's JSON (auditReportVersion 2), or the error it prints when the service refuses. */
export interface AuditJson {
  vulnerabilities?: Record<string, { name: string; severity: string; via: (Advisory | string)[] }>;
  metadata?: { vulnerabilities?: Record<string, number>; dependencies?: Record<string, number> };
  message?: string;
  statusCode?: number;
  error?: unknown;
}

export type Verdict =
  { kind: 'unreachable'; reason: string } | { kind: 'checked'; counts: Record<string, number>; listed: string[]; unlisted: string[] };

/** The advisories docs/operations.md lists as not applying: each row's advisory URL (or id). */
export function listedExceptions(markdown: string): string[] {
  const start = markdown.search(/^#+ Known vulnerabilities/m);
  if (start === -1) return [];
  const section = markdown.slice(start).split(/\n#+ /)[0]!;
  return [...section.matchAll(/^\|[^|\n]*\|\s*<?(https:\/\/\S+?|GHSA-[\w-]+)>?\s*\|/gm)].map((m) => m[1]!);
}

/** What npm audit said: unreachable, or the serious advisories, listed or not. */
export function judge(report: AuditJson, exceptions: string[]): Verdict {
  if (!report.metadata?.vulnerabilities || !report.vulnerabilities)
    return { kind: 'unreachable', reason: report.message ?? (report.error ? JSON.stringify(report.error) : 'npm audit gave no report') };
  const serious = new Map<string, string>();
  for (const v of Object.values(report.vulnerabilities))
    for (const via of v.via)
      if (typeof via === 'object' && SERIOUS.has(via.severity ?? v.severity))
        serious.set(
          via.url ?? String(via.source),
          `${v.name}: ${via.title ?? '?'} (${via.severity ?? v.severity}, ${via.url ?? via.source})`,
        );
  const ids = [...serious.keys()];
  const isListed = (id: string) => exceptions.some((e) => id === e || id.endsWith(`/${e}`));
  return {
    kind: 'checked',
    counts: report.metadata.vulnerabilities,
    listed: ids.filter(isListed).map((id) => serious.get(id)!),
    unlisted: ids.filter((id) => !isListed(id)).map((id) => serious.get(id)!),
  };
}

/** `npm audit --omit=dev --json` on the lock file, parsed (it exits non-zero on findings too). */
export function runAudit(root = projectRoot): AuditJson {
  const result = spawnSync('npm', ['audit', '--omit=dev', '--package-lock-only', '--json'], {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  try {
    return JSON.parse(result.stdout) as AuditJson;
  } catch {
    return { message: `npm audit printed no JSON (exit ${result.status}): ${result.stderr.trim().split('\n').at(-1) ?? ''}` };
  }
}

function main(): number {
  const verdict = judge(runAudit(), listedExceptions(readFileSync(exceptionsFile, 'utf8')));
  if (verdict.kind === 'unreachable') {
    process.stderr.write(
      `audit:prod: NOT CHECKED: the registry's advisory service could not be reached (${verdict.reason}); no advisory was looked up\n`,
    );
    return process.env.AUDIT_REQUIRED === '1' ? 1 : EXIT_UNREACHABLE;
  }
  const counts = Object.entries(verdict.counts)
    .map(([level, n]) => `${level} ${n}`)
    .join(', ');
  process.stdout.write(`npm audit --omit=dev: ${counts}\n`);
  for (const line of verdict.listed) process.stdout.write(`  listed in docs/operations.md as not applying: ${line}\n`);
  for (const line of verdict.unlisted) process.stderr.write(`  high or critical, not listed: ${line}\n`);
  if (verdict.unlisted.length === 0) return 0;
  process.stderr.write(
    '→ upgrade the dependency, or list the advisory in docs/operations.md (Known vulnerabilities) with why it does not apply\n',
  );
  return 1;
}

if (require.main === module) runTool('audit:prod failed', () => Promise.resolve().then(main));
