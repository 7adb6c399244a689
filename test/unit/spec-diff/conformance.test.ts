/**
 * The spec diff's conformance suite (test/unit/spec-diff/conformance/, its README.md): for every
 * rule family, edits of one small document read as OpenAPI 3.0 and as 3.1 (and 3.2 for its own constructs), each with the exact
 * findings expected and the check oasdiff lists for the same change. Where the most severe
 * level differs from oasdiff's, docs/spec-diff.md says why in one list item naming that check.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { diffDocuments, type Level } from '../../../scripts/spec-diff';
import { type Policy, presetPolicy } from '../../../scripts/spec-diff/policy';
import { FAMILIES } from '../../../scripts/spec-diff/rules';
import { projectRoot } from '../../../src/paths';

type Json = Record<string, any>;
type Version = '3.0' | '3.1' | '3.2';
interface PatchOp {
  op: 'add' | 'remove' | 'replace' | 'move';
  path: string;
  from?: string;
  value?: unknown;
}
interface Case {
  name: string;
  /** `<check id> ERR|WARN|INFO`, or `none` when oasdiff's list has no check for the change. */
  oasdiff: string;
  only?: Version;
  old?: PatchOp[];
  new: PatchOp[];
  /** `<rule id> <level>`, every finding, in any order. */
  expect: string[];
}

const DIR = path.join(__dirname, 'conformance');
const TODAY = new Date('2026-11-23T12:00:00Z');
const ALIASES: Record<string, string> = {
  '@list': '/paths/~1items/get',
  '@create': '/paths/~1items/post',
  '@get': '/paths/~1items~1{itemId}/get',
  '@req': '/paths/~1items/post/requestBody/content/application~1json/schema',
  '@res': '/paths/~1items/post/responses/201/content/application~1json/schema',
  '@items': '/paths/~1items/get/responses/200/content/application~1json/schema/items',
  '@hook': '/webhooks/itemSold/post',
  '@payload': '/webhooks/itemSold/post/requestBody/content/application~1json/schema',
};

const base: Json = parse(readFileSync(path.join(DIR, 'base.yaml'), 'utf8'));
const suites = readdirSync(DIR)
  .filter((f) => f.endsWith('.yaml') && f !== 'base.yaml')
  .map((file) => ({ file, ...(parse(readFileSync(path.join(DIR, file), 'utf8')) as { family: string; cases: Case[] }) }));

function documentOf(version: Version): Json {
  const doc = structuredClone(base);
  if (version === '3.0') delete doc.webhooks;
  else doc.openapi = `${version}.0`;
  return doc;
}

/** A JSON pointer (with the aliases above) as its tokens. */
function tokens(pointer: string): string[] {
  const alias = Object.keys(ALIASES).find((a) => pointer === a || pointer.startsWith(`${a}/`));
  const full = alias ? ALIASES[alias] + pointer.slice(alias.length) : pointer;
  return full
    .split('/')
    .slice(1)
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** RFC 6902 add, remove, replace and move, on the document in place. */
function apply(doc: Json, ops: PatchOp[]): void {
  const parentOf = (pointer: string): [any, string] => {
    const t = tokens(pointer);
    const last = t.pop()!;
    let at: any = doc;
    for (const k of t) {
      if (at?.[k] === undefined) throw new Error(`${pointer}: nothing at ${k}`);
      at = at[k];
    }
    return [at, last];
  };
  const remove = (pointer: string) => {
    const [parent, key] = parentOf(pointer);
    if (parent[key] === undefined) throw new Error(`${pointer}: nothing to remove`);
    const value = parent[key];
    if (Array.isArray(parent)) parent.splice(Number(key), 1);
    else delete parent[key];
    return value;
  };
  const add = (pointer: string, value: unknown) => {
    const [parent, key] = parentOf(pointer);
    if (Array.isArray(parent)) parent.splice(key === '-' ? parent.length : Number(key), 0, structuredClone(value));
    else parent[key] = structuredClone(value);
  };
  for (const op of ops) {
    if (op.op === 'add') add(op.path, op.value);
    else if (op.op === 'remove') remove(op.path);
    else if (op.op === 'replace') {
      remove(op.path);
      add(op.path, op.value);
    } else add(op.path, remove(op.from!));
  }
}

function run(c: Case, version: Version, policy?: Policy): string[] {
  const o = documentOf(version);
  apply(o, c.old ?? []);
  const n = structuredClone(o);
  apply(n, c.new);
  return diffDocuments(o, n, { today: TODAY, ...(policy ? { policy } : {}) })
    .map((f) => `${f.rule} ${f.level}`)
    .sort();
}

const LEVELS: (Level | 'none')[] = ['error', 'warning', 'info', 'none'];
const OASDIFF_LEVEL: Record<string, Level> = { ERR: 'error', WARN: 'warning', INFO: 'info' };
/** The most severe level of a case's findings; nothing reported counts as info (both say: safe). */
const severest = (expect: string[]) =>
  expect.map((e) => e.split(' ')[1] as Level).sort((a, b) => LEVELS.indexOf(a) - LEVELS.indexOf(b))[0] ?? 'info';
const theirs = (c: Case) => (c.oasdiff === 'none' ? 'info' : OASDIFF_LEVEL[c.oasdiff.split(' ')[1]!]);

const runs = suites.flatMap((s) =>
  // a case of every version runs in 3.0 and 3.1; one of a version's constructs, in that version alone
  s.cases.flatMap((c) => (c.only ? [c.only] : (['3.0', '3.1'] as const)).map((v) => ({ suite: s, c, version: v }))),
);

describe('spec diff conformance: each edit of the small document, in 3.0 and 3.1, gives exactly the findings listed', () => {
  test.each(runs.map((r) => [`${r.suite.family}: ${r.c.name} (${r.version})`, r] as const))('%s', (_name, { c, version }) => {
    expect(run(c, version)).toEqual([...c.expect].sort());
  });
});

/** The list items of a section of docs/spec-diff.md (up to its next heading), each with the indented lines that continue it. */
function docLines(heading: string): string[] {
  const page = readFileSync(path.join(projectRoot, 'docs/spec-diff.md'), 'utf8');
  const from = page.indexOf(heading);
  if (from < 0) throw new Error(`docs/spec-diff.md has no ${heading}`);
  const next = page.slice(from + heading.length).search(/\n#{2,3} /);
  const section = page.slice(from, next < 0 ? undefined : from + heading.length + next);
  const items: string[] = [];
  for (const line of section.split('\n')) {
    if (line.startsWith('- ')) items.push(line);
    else if (/^ +\S/.test(line) && items.length) items[items.length - 1] += ` ${line.trim()}`;
  }
  return items;
}

/** oasdiff's check id of a case, or (for `none`) the first rule expected. */
const checkOf = (c: Case) => (c.oasdiff === 'none' ? c.expect[0]!.split(' ')[0]! : c.oasdiff.split(' ')[0]!);

describe('spec diff conformance: the oasdiff preset (extends: oasdiff)', () => {
  const preset = presetPolicy('oasdiff');
  const differing = runs.filter((r) => severest(run(r.c, r.version, preset)) !== theirs(r.c));

  test("when the preset is the policy, then every case's most severe level is oasdiff's, but for the departures the docs list as no level can express", () => {
    const listed = docLines('### Departures a policy cannot express');
    expect(differing.map((r) => checkOf(r.c)).filter((id) => !listed.some((l) => l.includes(`\`${id}\``)))).toEqual([]);
    // and the list names nothing the preset reproduces
    const ids = new Set(differing.map((r) => checkOf(r.c)));
    expect(listed.filter((l) => ![...ids].some((id) => l.includes(`\`${id}\``)))).toEqual([]);
  });

  test('when the preset is the policy, then it agrees with oasdiff on more cases than the project’s own levels do', () => {
    const own = runs.filter((r) => severest(run(r.c, r.version)) !== theirs(r.c)).length;
    expect(differing.length).toBeLessThan(own);
  });
});

describe('spec diff conformance: the suite itself', () => {
  test('when the suite is read, then every case names oasdiff’s check (or none) and only rule ids and levels', () => {
    for (const { file, cases } of suites)
      for (const c of cases) {
        expect([file, c.name, /^(none|[a-z0-9-]+ (ERR|WARN|INFO))$/.test(c.oasdiff)]).toEqual([file, c.name, true]);
        for (const e of c.expect)
          expect([file, c.name, e]).toEqual([file, c.name, expect.stringMatching(/^[a-zA-Z0-9-]+ (error|warning|info)$/)]);
      }
  });

  test('when the families are counted, then every family of the rule table has cases in 3.0 and in 3.1 (webhooks: 3.1 only)', () => {
    const missing: string[] = [];
    for (const family of FAMILIES)
      for (const version of ['3.0', '3.1'] as const) {
        if (family === 'webhooks' && version === '3.0') continue;
        if (!runs.some((r) => r.suite.family === family && r.version === version)) missing.push(`${family} ${version}`);
      }
    expect(missing).toEqual([]);
    expect(suites.map((s) => s.family).filter((f) => !(FAMILIES as readonly string[]).includes(f))).toEqual([]);
  });

  test("when our level differs from oasdiff's, then docs/spec-diff.md gives the reason in a list item naming its check", () => {
    const lines = docLines('## Where we differ from oasdiff');
    const unexplained = suites.flatMap((s) =>
      s.cases
        .filter((c) => severest(c.expect) !== theirs(c))
        .map((c) => (c.oasdiff === 'none' ? c.expect[0]!.split(' ')[0]! : c.oasdiff.split(' ')[0]!))
        .filter((id) => !lines.some((l) => l.includes(`\`${id}\``))),
    );
    expect(unexplained).toEqual([]);
  });
});
