/**
 * The spec diff's output formats: text for people, JSON for tools, Markdown for pull
 * requests, GitHub workflow annotations, JUnit XML, and a changelog section.
 */
import path from 'node:path';
import { type Change, failures, LEVELS } from './index';
import { Locator } from './load';
import type { Level } from './rules';

export const FORMATS = ['text', 'json', 'markdown', 'github', 'junit', 'changelog'] as const;
export type Format = (typeof FORMATS)[number];

export interface ReportOptions {
  title?: string;
  failOn?: 'error' | 'warning';
  /** Problems with spec/accepted-changes.yaml: they fail the run too. */
  problems?: string[];
  /** Accepted-changes entries that matched nothing in a diff against the target branch (not failures). */
  unused?: string[];
  /** Findings the policy switched off, and the policy's file. */
  off?: Change[];
  policyFile?: string;
  /** For annotations: the files compared, and the names to show for them. */
  oldFile?: string;
  newFile?: string;
  /** How to name a file of each document in annotations (default: relative to the working directory). */
  oldName?: (file: string) => string;
  newName?: (file: string) => string;
}

/** `0 error, 18 warning, 65 info (1 accepted, 2 set by policy, 3 off by policy)`. */
export function counts(changes: Change[], off: Change[] = []): string {
  const notes = [
    [changes.filter((c) => c.accepted).length, 'accepted'],
    [changes.filter((c) => c.policy).length, 'set by policy'],
    [off.length, 'off by policy'],
  ] as const;
  const said = notes.filter(([n]) => n > 0).map(([n, what]) => `${n} ${what}`);
  return `${LEVELS.map((l) => `${changes.filter((c) => c.level === l).length} ${l}`).join(', ')}${said.length ? ` (${said.join(', ')})` : ''}`;
}

const levelWord = (c: Change) => `${c.level.toUpperCase()}${c.accepted ? ' (accepted)' : ''}`;
const note = (c: Change) =>
  `${c.stability ? ` [${c.stability} operation]` : ''}${c.policy ? ` [policy: ${c.policy.from} → ${c.level}: ${c.policy.reason}]` : ''}${c.accepted ? ` [accepted until ${c.accepted.expires}: ${c.accepted.reason}]` : ''}`;

/** The findings a policy switched off, one line per rule: `request-parameter-removed (2): reason`. */
function offLines(off: Change[]): string[] {
  const byRule = new Map<string, { n: number; reason: string }>();
  for (const c of off) {
    const e = byRule.get(c.rule) ?? { n: 0, reason: c.policy?.reason ?? '' };
    e.n++;
    byRule.set(c.rule, e);
  }
  return [...byRule].map(([rule, e]) => `${rule} (${e.n}): ${e.reason}`);
}

export function formatChanges(changes: Change[], format: Format, options: ReportOptions = {}): string {
  const title = options.title ?? 'Contract changes';
  const failOn = options.failOn ?? 'error';
  const problems = options.problems ?? [];
  const off = options.off ?? [];
  switch (format) {
    case 'json':
      return json(changes, options);
    case 'markdown':
      return markdown(changes, title, options);
    case 'github':
      return github(changes, options);
    case 'junit':
      return junit(changes, title, failOn, problems, off);
    case 'changelog':
      return changelog(changes, title);
    default: {
      const lines = changes.map(
        (c) =>
          `${levelWord(c).padEnd(17)} ${c.operation ? `${c.operation}: ` : ''}${c.message}${note(c)}\n${' '.repeat(18)}at ${c.pointer} [${c.rule}]`,
      );
      return [
        ...lines,
        ...problems.map((p) => `PROBLEM           ${p}`),
        ...(options.unused ?? []).map((p) => `UNUSED            ${p}`),
        ...offLines(off).map((l) => `OFF (policy)      ${l}`),
        `${changes.length ? '' : 'No changes. '}${counts(changes, off)}`,
      ].join('\n');
    }
  }
}

const failed = (changes: Change[], options: ReportOptions) =>
  failures(changes, options.failOn ?? 'error').length > 0 || (options.problems ?? []).length > 0;

function json(changes: Change[], options: ReportOptions): string {
  const off = options.off ?? [];
  return JSON.stringify(
    {
      failed: failed(changes, options),
      failOn: options.failOn ?? 'error',
      ...(options.policyFile ? { policy: options.policyFile } : {}),
      counts: Object.fromEntries([
        ...LEVELS.map((l) => [l, changes.filter((c) => c.level === l).length]),
        ['accepted', changes.filter((c) => c.accepted).length],
        ['policy', changes.filter((c) => c.policy).length],
        ['off', off.length],
      ]),
      changes,
      off,
      problems: options.problems ?? [],
      unused: options.unused ?? [],
    },
    null,
    2,
  );
}

/** A pull request comment or a job summary: the verdict and counts, then one row per finding. */
function markdown(changes: Change[], title: string, options: ReportOptions): string {
  const off = options.off ?? [];
  const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
  const levelCell = (c: Change) => {
    const word = c.level === 'error' && !c.accepted ? '**error**' : levelWord(c).toLowerCase();
    return c.policy ? `${word} (policy; was ${c.policy.from})` : word;
  };
  const rows = changes.map(
    (c) => `| ${levelCell(c)} | ${cell(c.operation ?? '')} | \`${cell(c.pointer)}\` | ${cell(c.message + note(c))} | \`${c.rule}\` |`,
  );
  return [
    `### ${title}`,
    '',
    `${failed(changes, options) ? '**Failed**' : 'Passed'}: ${counts(changes, off)}${options.policyFile ? ` — policy: \`${options.policyFile}\`` : ''}`,
    '',
    ...(changes.length ? ['| level | operation | where | change | rule |', '|---|---|---|---|---|', ...rows] : ['No changes.']),
    ...(off.length ? ['', `Switched off by the policy: ${offLines(off).map(cell).join('; ')}`] : []),
    ...(options.problems ?? []).map((p) => `\n**accepted-changes problem:** ${p}`),
    ...(options.unused ?? []).map((p) => `\n_accepted-changes entry not used here:_ ${p}`),
  ].join('\n');
}

/** GitHub workflow commands: data escaped as the runner reads it, properties with `,` and `:` too. */
const ghData = (s: string) => s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
const ghProp = (s: string) => ghData(s).replace(/:/g, '%3A').replace(/,/g, '%2C');
const ghCommand: Record<Level, string> = { error: 'error', warning: 'warning', info: 'notice' };

function github(changes: Change[], options: ReportOptions): string {
  const relative = (file: string) => path.relative(process.cwd(), file);
  const newName = options.newName ?? relative;
  const oldName = options.oldName ?? relative;
  const newLocator = options.newFile ? new Locator(options.newFile) : undefined;
  const oldLocator = options.oldFile ? new Locator(options.oldFile) : undefined;
  // One annotation per line, rule and message: a shared schema's change is not repeated per operation.
  const annotations = new Map<
    string,
    { command: string; file: string; line: number; rule: string; message: string; operations: string[] }
  >();
  for (const c of changes) {
    // An annotation lands on a line of the pull request's files: for what was removed, the
    // nearest part of the new document that is still there; the old line is in the message.
    const place = newLocator?.locate(c.pointer);
    const file = newName(place?.file ?? options.newFile ?? 'spec/openapi.yaml');
    let message = `${c.message}${note(c)}`;
    if (c.side === 'old' && oldLocator) {
      const was = oldLocator.locate(c.pointer);
      message += ` (was at ${oldName(was.file)} line ${was.line})`;
    }
    const command = c.accepted ? 'notice' : ghCommand[c.level];
    const line = place?.line ?? 1;
    const rule = c.policy ? `${c.rule} (policy: ${c.policy.from} → ${c.level})` : c.rule;
    const key = `${command}|${file}|${line}|${rule}|${message}`;
    const entry = annotations.get(key) ?? { command, file, line, rule, message, operations: [] };
    if (c.operation && !entry.operations.includes(c.operation)) entry.operations.push(c.operation);
    annotations.set(key, entry);
  }
  const lines = [...annotations.values()].map(
    (a) =>
      `::${a.command} file=${ghProp(a.file)},line=${a.line},title=${ghProp(a.rule)}::${ghData(`${a.operations.length ? `${a.operations.join(', ')}: ` : ''}${a.message}`)}`,
  );
  for (const p of options.problems ?? []) lines.push(`::error title=accepted-changes::${ghData(p)}`);
  const off = options.off ?? [];
  if (off.length)
    lines.push(
      `::notice title=spec-diff-policy::${ghData(`${off.length} finding(s) switched off by ${options.policyFile ?? 'the policy'}: ${offLines(off).join('; ')}`)}`,
    );
  return lines.join('\n');
}

const xml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function junit(changes: Change[], title: string, failOn: 'error' | 'warning', problems: string[], off: Change[]): string {
  const failing = new Set(failures(changes, failOn));
  const headOf = (c: Change) => `    <testcase classname="${xml(c.operation ?? 'document')}" name="${xml(`${c.rule} ${c.pointer}`)}">`;
  const cases = changes.map((c) => {
    const head = headOf(c);
    if (failing.has(c))
      return `${head}\n      <failure type="${c.level}" message="${xml(c.message)}">${xml(`${c.level}: ${c.message}${note(c)}\nat ${c.pointer}`)}</failure>\n    </testcase>`;
    if (c.accepted)
      return `${head}\n      <skipped message="${xml(`accepted until ${c.accepted.expires}: ${c.accepted.reason}`)}"/>\n    </testcase>`;
    return `${head}\n      <system-out>${xml(`${c.level}: ${c.message}${note(c)}`)}</system-out>\n    </testcase>`;
  });
  for (const c of off)
    cases.push(
      `${headOf(c)}\n      <skipped message="${xml(`off by policy (was ${c.level}): ${c.policy?.reason ?? ''}`)}"/>\n    </testcase>`,
    );
  for (const p of problems)
    cases.push(
      `    <testcase classname="accepted-changes" name="${xml(p.split(':')[0] ?? p)}">\n      <failure type="error" message="${xml(p)}"/>\n    </testcase>`,
    );
  if (cases.length === 0) cases.push('    <testcase classname="document" name="no changes"/>');
  const failed = failing.size + problems.length;
  const total = Math.max(cases.length, 1);
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="spec diff" tests="${total}" failures="${failed}">`,
    `  <testsuite name="${xml(title)}" tests="${total}" failures="${failed}" skipped="${changes.filter((c) => c.accepted).length + off.length}">`,
    ...cases,
    '  </testsuite>',
    '</testsuites>',
  ].join('\n');
}

/** A changelog section: the changes grouped by level, descriptions left out. */
export function changelog(changes: Change[], heading: string): string {
  const groups: [string, (c: Change) => boolean][] = [
    ['Breaking changes', (c) => c.level === 'error' && !c.accepted],
    ['Breaking changes shipped on purpose (accepted)', (c) => c.level === 'error' && !!c.accepted],
    ['Changes to check (warnings)', (c) => c.level === 'warning'],
    ['Other changes', (c) => c.level === 'info' && c.rule !== 'description-changed'],
  ];
  const out = [`## ${heading}`, ''];
  for (const [name, pick] of groups) {
    const list = changes.filter(pick);
    if (list.length === 0) continue;
    out.push(`### ${name}`, '');
    for (const c of list) out.push(`- ${c.operation ? `\`${c.operation}\`: ` : ''}${c.message}${note(c)} (\`${c.rule}\`)`);
    out.push('');
  }
  const docs = changes.filter((c) => c.rule === 'description-changed').length;
  if (docs) out.push(`${docs} description(s) changed.`, '');
  if (out.length === 2) out.push('No changes to the contract.', '');
  return out.join('\n');
}
