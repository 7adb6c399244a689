/**
 * Deprecation and sunsets, of anything that may be deprecated (an operation, a webhook, a
 * parameter, a property): `deprecated` and `x-sunset` compared, and a removal graded by its date.
 */
import type { Ctx } from './context';
import { sunsetDate } from './extensions';
import type { Json } from './load';
import type { RuleId, Subject } from './rules';

/** The `x-sunset` date as YYYY-MM-DD; absent or invalid (its own finding: extensions.ts) is undefined. */
export const sunsetOf = (x: Json | undefined): string | undefined => sunsetDate(x?.['x-sunset']);

const daysBetween = (from: string, to: string) => Math.round((Date.parse(to) - Date.parse(from)) / 86_400_000);

/** `deprecated` and `x-sunset` of one operation, parameter or property. */
export function compareDeprecation(subject: Subject, o: Json, n: Json, at: string, ctx: Ctx): void {
  const oDep = o.deprecated === true;
  const nDep = n.deprecated === true;
  const os = sunsetOf(o);
  const ns = sunsetOf(n);
  const tooSoon = (date: string) => daysBetween(ctx.today, date) < ctx.deprecationDays;
  if (!oDep && nDep) {
    if (!ns) ctx.push(`${subject}-deprecated-without-sunset`, `${at}/deprecated`, 'deprecated without an x-sunset date');
    else if (tooSoon(ns))
      ctx.push(
        `${subject}-sunset-too-soon`,
        `${at}/x-sunset`,
        `deprecated with x-sunset ${ns}, ${daysBetween(ctx.today, ns)} day(s) away: the deprecation period is ${ctx.deprecationDays} days`,
      );
    else ctx.push(`${subject}-deprecated`, `${at}/deprecated`, `deprecated, to be removed on ${ns}`);
  } else if (oDep && !nDep) {
    ctx.push(`${subject}-undeprecated`, `${at}/deprecated`, 'no longer deprecated');
  }
  if (os === ns || (!oDep && nDep && ns)) return; // the new date was graded with the deprecation
  if (os === undefined) {
    if (nDep && tooSoon(ns!))
      ctx.push(
        `${subject}-sunset-too-soon`,
        `${at}/x-sunset`,
        `x-sunset ${ns} is ${daysBetween(ctx.today, ns!)} day(s) away: the deprecation period is ${ctx.deprecationDays} days`,
      );
    else ctx.push(`${subject}-sunset-added`, `${at}/x-sunset`, `to be removed on ${ns}`);
  } else if (ns === undefined) ctx.push(`${subject}-sunset-removed`, at, `removal date ${os} withdrawn`);
  else if (ns < os)
    ctx.push(`${subject}-sunset-moved-earlier`, `${at}/x-sunset`, `removal moved earlier, from ${os} to ${ns}: clients planned for ${os}`);
  else ctx.push(`${subject}-sunset-moved-later`, `${at}/x-sunset`, `removal moved later, from ${os} to ${ns}`);
}

/**
 * Something removed from the contract: after its x-sunset date that is expected, before it
 * is breaking, and without one the plain rule applies.
 */
export function removal(subject: Subject, plainRule: RuleId, old: Json, at: string, what: string, ctx: Ctx): void {
  const sunset = sunsetOf(old);
  if (sunset && sunset <= ctx.today)
    ctx.push(`${subject}-removed-after-sunset`, at, `${what} removed after its sunset date ${sunset}`, 'old');
  else if (sunset) ctx.push(`${subject}-removed-before-sunset`, at, `${what} removed before its sunset date ${sunset}`, 'old');
  else ctx.push(plainRule, at, `${what} removed`, 'old');
}
