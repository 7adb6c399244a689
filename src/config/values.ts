/** How one variable's value is read and checked: every reader of the configuration uses these. */

/** An integer variable within [min, max]; unset: `fallback`; anything else is a problem named (and `fallback`). */
export function integerVar(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number, problems: string[]): number {
  const text = env[name];
  if (text === undefined) return fallback;
  if (!/^[0-9]{1,10}$/.test(text) || Number(text) < min || Number(text) > max) {
    problems.push(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(text)}`);
    return fallback;
  }
  return Number(text);
}

/** `target_session_attrs` values: what DATABASE_URL may ask for (a server that takes writes), and what a replica's URL may. */
export const PRIMARY_SESSION_ATTRS = ['primary', 'read-write'] as const;
export const REPLICA_SESSION_ATTRS = ['any', 'standby', 'prefer-standby', 'read-only'] as const;

function urlOrUndefined(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

/** A PostgreSQL URL as libpq and postgres.js read it: one host, or several (`h1:5432,h2:5432`), each tried in turn. */
export interface PostgresUrl {
  hosts: string[];
  targetSessionAttrs: string | undefined;
}

/**
 * A PostgreSQL URL read, or the problems with it named. Several hosts are a comma-separated list
 * where one host would be (`postgres://user@h1:5432,h2:5433/db?target_session_attrs=primary`); each
 * must make a URL of its own with the rest. `allowed`: the target_session_attrs this variable may name.
 */
export function readPostgresUrl(name: string, text: string, allowed: readonly string[]): PostgresUrl | string[] {
  const expected = `${name} is not a URL (expected postgres://user@host:port/database, or several hosts as host1:port1,host2:port2)`;
  const [, scheme, userinfo, hostList = '', rest = ''] = /^([a-z][a-z0-9+.-]*):\/\/(?:([^@/?#]*)@)?([^/?#]*)(.*)$/i.exec(text) ?? [];
  if (scheme === undefined) return [expected];
  if (scheme !== 'postgres' && scheme !== 'postgresql') return [`${name} must start with postgres:// or postgresql://, got ${scheme}://`];
  const hosts = hostList.split(',');
  // An empty host (`postgres:///db?host=/var/run/postgresql`, a Unix socket) is one server, never one of several.
  const urls = hosts.map((host) =>
    host === '' && hosts.length > 1
      ? undefined
      : urlOrUndefined(`postgres://${userinfo === undefined ? '' : `${userinfo}@`}${host}${rest}`),
  );
  const [first] = urls;
  if (first === undefined || urls.includes(undefined)) return [expected];
  const targetSessionAttrs = first.searchParams.get('target_session_attrs') ?? undefined;
  if (targetSessionAttrs !== undefined && !allowed.includes(targetSessionAttrs))
    return [`${name}: target_session_attrs must be one of ${allowed.join(', ')}, got ${JSON.stringify(targetSessionAttrs)}`];
  return { hosts, targetSessionAttrs };
}
