/**
 * The extension values the spec diff reads, checked in the new document: an `x-sunset` that is
 * not a date and an `x-stability-level` outside the known levels are findings of their own
 * (error), naming the value and where it is, instead of being read as absent or as stable.
 */
import { esc, type Json } from './load';
import type { RuleId } from './rules';

/** The stability levels, lowest first; `experimental` and `alpha` are the same rank. */
export const STABILITY_RANK = { draft: 0, alpha: 1, experimental: 1, beta: 2, stable: 3 } as const;
export type StabilityLevel = keyof typeof STABILITY_RANK;

export const isStabilityLevel = (v: unknown): v is StabilityLevel => typeof v === 'string' && Object.hasOwn(STABILITY_RANK, v);

/**
 * An `x-sunset` value as YYYY-MM-DD: a date (YAML may have read it as one), or an RFC 3339
 * full-date or date-time whose date exists; anything else is undefined.
 */
export function sunsetDate(value: unknown): string | undefined {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? undefined : value.toISOString().slice(0, 10);
  if (typeof value !== 'string') return undefined;
  const m = /^(\d{4}-\d{2}-\d{2})(?:[Tt]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2}))?$/.exec(value);
  if (!m?.[1]) return undefined;
  const date = new Date(`${m[1]}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === m[1] ? m[1] : undefined;
}

const shown = (v: unknown) => (v instanceof Date ? v.toISOString() : JSON.stringify(v));

/** Every invalid `x-sunset` and `x-stability-level` of `doc`, each where it is first reached. */
export function checkExtensions(doc: Json, push: (rule: RuleId, pointer: string, message: string) => void): void {
  const seen = new Set<object>();
  const walk = (node: unknown, at: string) => {
    if (typeof node !== 'object' || node === null || node instanceof Date || seen.has(node)) return;
    seen.add(node);
    const n = node as Json;
    if (!Array.isArray(node)) {
      if ('x-sunset' in n && sunsetDate(n['x-sunset']) === undefined)
        push(
          'sunset-invalid',
          `${at}/x-sunset`,
          `x-sunset ${shown(n['x-sunset'])} is not a date (YYYY-MM-DD): its removal date cannot be read`,
        );
      if ('x-stability-level' in n && !isStabilityLevel(n['x-stability-level']))
        push(
          'stability-level-invalid',
          `${at}/x-stability-level`,
          `x-stability-level ${shown(n['x-stability-level'])} is not one of ${Object.keys(STABILITY_RANK).join(', ')}: it is read as stable`,
        );
    }
    for (const [key, value] of Object.entries(n)) walk(value, `${at}/${esc(key)}`);
  };
  walk(doc, '');
}
