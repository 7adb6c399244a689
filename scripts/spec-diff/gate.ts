/**
 * The gate: what `npm run contract` and `npm run spec:diff` (the pull request's step) both
 * decide with, so that they cannot drift apart. The two documents are graded under the team's
 * policy, the accepted changes are applied, and the run fails on a finding at or above
 * `failOn` that no entry accepts, or on a problem with the accepted-changes file.
 *
 * Its scope says how strict the accepted-changes file is read:
 * - `release` (against the released contract, `npm run contract`): every entry must match a
 *   change, or it is stale;
 * - `change` (against the target branch, `--base`): the diff holds one pull request's changes
 *   only, so an entry matching nothing may accept an earlier change still unreleased, and is
 *   listed as unused, not failed. An expired entry fails in both.
 */
import { type AcceptedEntry, applyAccepted } from './accepted';
import { type Change, failures, gradeDocuments, type Json } from './index';
import type { Policy } from './policy';

export type GateScope = 'release' | 'change';

export interface GateOptions {
  today: Date;
  deprecationDays?: number;
  failOn?: 'error' | 'warning';
  policy?: Policy;
  /** The accepted-changes file's entries, and its name in messages. */
  accepted?: { entries: AcceptedEntry[]; file: string };
  scope: GateScope;
}

export interface Verdict {
  changes: Change[];
  /** Findings the policy switched off. */
  off: Change[];
  /** What is wrong with the accepted-changes file: each fails the run. */
  problems: string[];
  /** Entries (by index) that matched a change. */
  used: number[];
  /** Entries that matched nothing, in the `change` scope (not a failure there). */
  unused: string[];
  /** The findings that fail the run. */
  failing: Change[];
  failed: boolean;
}

export function gate(oldDoc: Json, newDoc: Json, options: GateOptions): Verdict {
  const failOn = options.failOn ?? 'error';
  const graded = gradeDocuments(oldDoc, newDoc, {
    today: options.today,
    ...(options.deprecationDays !== undefined ? { deprecationDays: options.deprecationDays } : {}),
    ...(options.policy ? { policy: options.policy } : {}),
  });
  let changes = graded.changes;
  const problems: string[] = [];
  let used: number[] = [];
  const unused: string[] = [];
  if (options.accepted) {
    const applied = applyAccepted(changes, options.accepted.entries, options.today, options.accepted.file);
    changes = applied.changes;
    used = applied.used;
    problems.push(...applied.problems);
    for (const what of applied.unmatched)
      if (options.scope === 'change') unused.push(`${what} matches no change of this diff (it may accept a change made before it)`);
      else
        problems.push(`${what} matches no change: remove it (the change is released or undone), or correct its rule, operation or pointer`);
  }
  const failing = failures(changes, failOn);
  return { changes, off: graded.off, problems, used, unused, failing, failed: failing.length > 0 || problems.length > 0 };
}
