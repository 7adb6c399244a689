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
  /** For annotations: the files compared, and the names to show for them. */
  oldFile?: string;
  newFile?: string;
  /** How to name a file of each document in annotations (default: relative to the working directory). */
  oldName?: (file: string) => string;
  newName?: (file: string) => string;
}

/** `0 error, 18 warning, 65 info (1 accepted)`. */
export function counts(changes: Change[]): string {
  const accepted = changes.filter((c) => c.accepted).length;
  return `${LEVELS.map((l) => `${changes.filter((c) => c.level === l).length} ${l}`).join(', ')}${accepted ? ` (${accepted} accepted)` : ''}`;
}

const levelWord = (c: Change) => `${c.level.toUpperCase()}${c.accepted ? ' (accepted)' : ''}`;
const note = (c: Change) =>
  `${c.stability ? ` [${c.stability} operation]` : ''}${c.accepted ? ` [accepted until ${c.accepted.expires}: ${c.accepted.reason}]` : ''}`;

export function formatChanges(changes: Change[], format: Format, options: ReportOptions = {}): string {
  const title = options.title ?? 'Contract changes';
  const failOn = options.failOn ?? 'error';
  const problems = options.problems ?? [];
  switch (format) {
    case 'json':
      return JSON.stringify(
        {
          failed: failures(changes, failOn).length > 0 || problems.length > 0,
          failOn,
          counts: Object.fromEntries([
            ...LEVELS.map((l) => [l, changes.filter((c) => c.level === l).length]),
            ['accepted', changes.filter((c) => c.accepted).length],
          ]),
          changes,
          problems,
        },
        null,
        2,
      );
    case 'markdown': {
      const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
      const rows = changes.map(
        (c) =>
          `| ${c.level === 'error' && !c.accepted ? '**error**' : levelWord(c).toLowerCase()} | ${cell(c.operation ?? '')} | \`${cell(c.pointer)}\` | ${cell(c.message + note(c))} | \`${c.rule}\` |`,
      );
      return [
        `### ${title}`,
        '',
        counts(changes),
        '',
        ...(changes.length ? ['| level | operation | where | change | rule |', '|---|---|---|---|---|', ...rows] : ['No changes.']),
        ...problems.map((p) => `\n**accepted-changes problem:** ${p}`),
      ].join('\n');
    }
    case 'github':
      return github(changes, options);
    case 'junit':
      return junit(changes, title, failOn, problems);
    case 'changelog':
      return changelog(changes, title);
    default: {
      const lines = changes.map(
        (c) =>
          `${levelWord(c).padEnd(17)} ${c.operation ? `${c.operation}: ` : ''}${c.message}${note(c)}\n${' '.repeat(18)}at ${c.pointer} [${c.rule}]`,
      );
      return [...lines, ...problems.map((p) => `PROBLEM           ${p}`), `${changes.length ? '' : 'No changes. '}${counts(changes)}`].join(
        '\n',
      );
    }
  }
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
    const key = `${command}|${file}|${line}|${c.rule}|${message}`;
    const entry = annotations.get(key) ?? { command, file, line, rule: c.rule, message, operations: [] };
    if (c.operation && !entry.operations.includes(c.operation)) entry.operations.push(c.operation);
    annotations.set(key, entry);
  }
  const lines = [...annotations.values()].map(
    (a) =>
      `::${a.command} file=${ghProp(a.file)},line=${a.line},title=${ghProp(a.rule)}::${ghData(`${a.operations.length ? `${a.operations.join(', ')}: ` : ''}${a.message}`)}`,
  );
  for (const p of options.problems ?? []) lines.push(`::error title=accepted-changes::${ghData(p)}`);
  return lines.join('\n');
}

const xml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function junit(changes: Change[], title: string, failOn: 'error' | 'warning', problems: string[]): string {
  const failing = new Set(failures(changes, failOn));
  const cases = changes.map((c) => {
    const head = `    <testcase classname="${xml(c.operation ?? 'document')}" name="${xml(`${c.rule} ${c.pointer}`)}">`;
    if (failing.has(c))
      return `${head}\n      <failure type="${c.level}" message="${xml(c.message)}">${xml(`${c.level}: ${c.message}${note(c)}\nat ${c.pointer}`)}</failure>\n    </testcase>`;
    if (c.accepted)
      return `${head}\n      <skipped message="${xml(`accepted until ${c.accepted.expires}: ${c.accepted.reason}`)}"/>\n    </testcase>`;
    return `${head}\n      <system-out>${xml(`${c.level}: ${c.message}${note(c)}`)}</system-out>\n    </testcase>`;
  });
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
    `  <testsuite name="${xml(title)}" tests="${total}" failures="${failed}" skipped="${changes.filter((c) => c.accepted).length}">`,
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
