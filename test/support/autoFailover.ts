import { autoFailoverUnavailable } from '../../scripts/lib/autoFailover';

export * from '../../scripts/lib/autoFailover';

/** `describe`, or `describe.skip` naming why; REQUIRE_AUTO_FAILOVER=1 (set by .ci/run) turns the skip into a failure. */
export function describeWithAutoFailover(name: string, fn: () => void): void {
  const why = autoFailoverUnavailable();
  if (why && process.env.REQUIRE_AUTO_FAILOVER === '1') throw new Error(`${name}: ${why}, and REQUIRE_AUTO_FAILOVER=1`);
  if (why) describe.skip(`${name} (skipped: ${why})`, fn);
  else describe(name, fn);
}
