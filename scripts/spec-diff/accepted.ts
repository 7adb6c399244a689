/**
 * spec/accepted-changes.yaml: breaking changes a team decided to ship. A listed change is
 * reported as accepted and fails nothing; an entry that matches no change, or whose expiry
 * date has passed, fails the run with a message saying so.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { parseYaml } from './load';
import type { Change } from './index';
import { RULES } from './rules';

export interface AcceptedEntry {
  rule: string;
  /** `METHOD /path` (QUERY and 3.2's other methods too), or `METHOD webhook:name`; absent: any operation. */
  operation?: string;
  /** JSON pointer of the change; absent: anywhere in the operation. */
  pointer?: string;
  reason: string;
  /** YYYY-MM-DD: after this day the entry fails, so that acceptances are revisited. */
  expires: string;
}

export class AcceptedFileError extends Error {
  constructor(file: string, reason: string) {
    super(`${file}: ${reason}`);
    this.name = 'AcceptedFileError';
  }
}

const schema = {
  type: 'object',
  additionalProperties: false,
  required: ['accepted'],
  properties: {
    accepted: {
      type: ['array', 'null'],
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['rule', 'reason', 'expires'],
        properties: {
          rule: { type: 'string', minLength: 1 },
          // any method (3.2: QUERY, and additionalOperations' own), then a path or a webhook
          operation: { type: 'string', pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]+ (/|webhook:)" },
          pointer: { type: 'string', pattern: '^(/.*)?$' },
          reason: { type: 'string', minLength: 1 },
          expires: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$' },
        },
      },
    },
  },
} as const;
/** The file's validator, compiled on the first file read (ajv is loaded then: a run without a file starts faster). */
function validator() {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const Ajv = (require('ajv') as typeof import('ajv')).default;
  return new Ajv({ allErrors: false }).compile<{ accepted: AcceptedEntry[] | null }>(schema);
}
let validate: ReturnType<typeof validator> | undefined;

/** Reads and checks the file; a missing file accepts nothing. */
export function readAccepted(file: string): AcceptedEntry[] {
  if (!existsSync(file)) return [];
  let data: unknown;
  try {
    data = parseYaml(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new AcceptedFileError(file, `cannot be read as YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  if (data === null || data === undefined) return [];
  validate ??= validator();
  if (!validate(data)) {
    const e = validate.errors?.[0];
    throw new AcceptedFileError(
      file,
      `${e?.instancePath || '/'} ${e?.message ?? 'is not valid'} (each entry: rule, reason, expires YYYY-MM-DD; optional operation, pointer)`,
    );
  }
  const entries = data.accepted ?? [];
  entries.forEach((entry, i) => {
    if (!RULES.has(entry.rule))
      throw new AcceptedFileError(file, `/accepted/${i}/rule: no rule ${entry.rule} (see the rule list in the README)`);
  });
  return entries;
}

const matches = (e: AcceptedEntry, c: Change) =>
  e.rule === c.rule && (e.operation === undefined || e.operation === c.operation) && (e.pointer === undefined || e.pointer === c.pointer);

/**
 * Marks the changes the entries list; returns the entries that expired (`problems`), those
 * used, and those that matched nothing (`unmatched`: a problem or not, as the gate's scope says).
 */
export function applyAccepted(
  changes: Change[],
  entries: AcceptedEntry[],
  today: Date,
  file = 'spec/accepted-changes.yaml',
): { changes: Change[]; problems: string[]; used: number[]; unmatched: string[] } {
  const day = today.toISOString().slice(0, 10);
  const problems: string[] = [];
  const used: number[] = [];
  const unmatched: string[] = [];
  const marked = changes.map((c) => ({ ...c }));
  entries.forEach((e, i) => {
    const what = `${file} entry ${i + 1} (${e.rule}${e.operation ? ` on ${e.operation}` : ''})`;
    if (e.expires < day) {
      problems.push(`${what} expired on ${e.expires}: fix the change, or renew the entry with a new date and reason`);
      return;
    }
    const hits = marked.filter((c) => matches(e, c));
    if (hits.length === 0) {
      unmatched.push(what);
      return;
    }
    used.push(i);
    for (const c of hits) c.accepted = { reason: e.reason, expires: e.expires };
  });
  return { changes: marked, problems, used, unmatched };
}

/** Removes the entries a release consumed, keeping the file's comments. */
export function removeAccepted(file: string, indexes: number[]): void {
  if (indexes.length === 0 || !existsSync(file)) return;
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- `yaml` keeps the file's comments; loaded by a release only
  const { isSeq, parseDocument } = require('yaml') as typeof import('yaml');
  const doc = parseDocument(readFileSync(file, 'utf8'));
  const list = doc.get('accepted');
  if (!isSeq(list)) return;
  for (const i of [...indexes].sort((a, b) => b - a)) list.items.splice(i, 1);
  writeFileSync(file, doc.toString());
}
