/**
 * The spec diff: compares two OpenAPI documents (3.0.x or 3.1.x) and grades every change
 * for the clients of the old one, each finding with a stable rule id (rules.ts) and a level:
 * `error` (breaking), `warning` (may break some clients) or `info`.
 *
 * Requests and responses are compared in opposite directions, and a 3.1 webhook's the other
 * way round (webhooks.ts). An operation's
 * `x-stability-level` in the old document softens what breaks it: draft, alpha, experimental → info,
 * beta → warning.
 */
import type { Json } from './load';
import { STABILITY_RANK, type StabilityLevel, checkExtensions } from './extensions';
import { compareOperation } from './operations';
import { basePaths, operationsOf, stabilityOf } from './operationParts';
import { type Level, ruleOf } from './rules';
import type { Ctx } from './context';
import type { Policy } from './policy';
import { removal } from './deprecation';
import { compareWebhook } from './webhooks';
import { compareDocumentFields } from './fields';
import { compareSecuritySchemes } from './security';

export { DocumentError, loadDocument, Locator, type Json } from './load';
export { type Level, RULES, renderRuleList } from './rules';
export type { StabilityLevel } from './extensions';

export interface Change {
  level: Level;
  /** A stable identifier of the rule, e.g. `request-parameter-removed` (rules.ts). */
  rule: string;
  /** `METHOD /path` of the operation concerned, when there is one. */
  operation?: string;
  /** JSON pointer into the new document, or into the old one for what was removed (`side: 'old'`). */
  pointer: string;
  side: 'old' | 'new';
  message: string;
  /** Set when the operation's stability level changed the rule's level. */
  stability?: Exclude<StabilityLevel, 'stable'>;
  /** Set when spec/accepted-changes.yaml lists the change. */
  accepted?: { reason: string; expires: string };
  /** Set when a policy (spec/spec-diff-policy.yaml) changed the rule's level: the table's level, and the policy's reason. */
  policy?: { from: Level; reason: string };
}

export interface DiffOptions {
  /** The day removals are judged on (sunsets passed or not): today. */
  today?: Date;
  /** The shortest deprecation period a new x-sunset may give, in days: 180. */
  deprecationDays?: number;
  /** A team's levels (policy.ts); the rule table's where it names none. */
  policy?: Policy;
}

/** What a comparison found: the changes, and the findings a policy switched off (kept to be counted and listed). */
export interface Graded {
  changes: Change[];
  off: Change[];
}

export const LEVELS: readonly Level[] = ['error', 'warning', 'info'];
const rank = (l: Level) => LEVELS.indexOf(l);

/** What a finding's level becomes on an operation of the old document's stability level. */
function softened(level: Level, stability: StabilityLevel): Level {
  if (STABILITY_RANK[stability] <= STABILITY_RANK.experimental) return 'info';
  if (stability === 'beta' && level === 'error') return 'warning';
  return level;
}

/** Where the findings on one operation (or the document, with none) go: graded, softened by its stability, and kept in `changes`. */
function findings(graded: Graded, today: string, deprecationDays: number, policy: Policy | undefined) {
  return (operation?: string, stability: StabilityLevel = 'stable'): Ctx => ({
    today,
    deprecationDays,
    push: (rule, pointer, message, side = 'new') => {
      const table = ruleOf(rule).level;
      const set = policy?.get(rule);
      const base = set === undefined || set.level === 'off' ? table : set.level;
      const level = softened(base, stability);
      const change: Change = {
        level,
        rule,
        ...(operation ? { operation } : {}),
        pointer,
        side,
        message,
        ...(level !== base && stability !== 'stable' ? { stability } : {}),
        ...(set !== undefined && set.level !== table ? { policy: { from: table, reason: set.reason } } : {}),
      };
      (set?.level === 'off' ? graded.off : graded.changes).push(change);
    },
  });
}

/** Every change from `oldDoc` to `newDoc` (both resolved by loadDocument), the most severe first. */
export function diffDocuments(oldDoc: Json, newDoc: Json, options: DiffOptions = {}): Change[] {
  return gradeDocuments(oldDoc, newDoc, options).changes;
}

/** Every change, graded by the policy: those it switched off apart. */
export function gradeDocuments(oldDoc: Json, newDoc: Json, options: DiffOptions = {}): Graded {
  const today = (options.today ?? new Date()).toISOString().slice(0, 10);
  const deprecationDays = options.deprecationDays ?? 180;
  const graded: Graded = { changes: [], off: [] };
  const ctxFor = findings(graded, today, deprecationDays, options.policy);

  const ob = basePaths(oldDoc);
  const nb = basePaths(newDoc);
  if (ob.join() !== nb.join())
    ctxFor().push(
      'server-base-path-changed',
      '/servers',
      `base path changed from ${ob.join(', ') || 'none'} to ${nb.join(', ') || 'none'}: every URL changes`,
    );
  if ((oldDoc.info?.description ?? '') !== (newDoc.info?.description ?? ''))
    ctxFor().push('description-changed', '/info/description', 'API description changed');
  compareDocumentFields(oldDoc, newDoc, ctxFor());
  compareSecuritySchemes(oldDoc, newDoc, ctxFor());

  // The extension values of the document shipped next: a date or a level that cannot be read.
  checkExtensions(newDoc, (rule, pointer, message) => ctxFor().push(rule, pointer, message));

  const oldOps = operationsOf(oldDoc);
  const newOps = operationsOf(newDoc);
  for (const [key, o] of oldOps) {
    const n = newOps.get(key);
    const ctx = ctxFor(n?.label ?? o.label, stabilityOf(o.op));
    if (n) {
      compareOperation(oldDoc, newDoc, o, n, ctx);
      continue;
    }
    const movedTo = [...newOps.values()].find((x) => x.op.operationId && x.op.operationId === o.op.operationId && !oldOps.has(x.key));
    removal('operation', 'operation-removed', o.op, o.pointer, movedTo ? `operation (moved to ${movedTo.label})` : 'operation', ctx);
  }
  for (const [key, n] of newOps)
    if (!oldOps.has(key)) ctxFor(n.label, stabilityOf(n.op)).push('operation-added', n.pointer, 'operation added');

  // 3.1 webhooks: the operations the API calls, compared with their directions reversed (webhooks.ts)
  const oldHooks = operationsOf(oldDoc, 'webhooks');
  const newHooks = operationsOf(newDoc, 'webhooks');
  for (const [key, o] of oldHooks) {
    const n = newHooks.get(key);
    const ctx = ctxFor(n?.label ?? o.label, stabilityOf(o.op));
    if (n) compareWebhook(oldDoc, newDoc, o, n, ctx);
    else removal('webhook', 'webhook-removed', o.op, o.pointer, `webhook ${o.name} (${o.method})`, ctx);
  }
  for (const [key, n] of newHooks)
    if (!oldHooks.has(key)) ctxFor(n.label, stabilityOf(n.op)).push('webhook-added', n.pointer, `webhook ${n.name} (${n.method}) added`);

  graded.changes.sort((a, b) => rank(a.level) - rank(b.level));
  return graded;
}

/** The findings that fail a run: at `failOn` or above, and not accepted. */
export function failures(changes: Change[], failOn: 'error' | 'warning' = 'error'): Change[] {
  return changes.filter((c) => !c.accepted && rank(c.level) <= rank(failOn));
}
