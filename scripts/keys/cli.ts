/**
 * npm run keys -- <command>: API keys as managed records, while the service runs (docs/operations.md, Keys).
 *
 *   create --client NAME --scopes pets:read[,pets:write] [--expires 90d] [--note TEXT]
 *   list [--client NAME]
 *   rotate ID [--grace 24h] [--expires 90d]
 *   revoke ID
 *
 * Every command takes --actor NAME (who, for the audit; default: the OS user), --json and --timeout. A key
 * is printed once, by create and rotate; every create, rotate and revoke is a row of
 * api_key_audit and one JSON line on stderr. The database is DATABASE_URL's, or without it the
 * embedded one of a running `npm start` (or its data directory, opened here when none runs).
 */
import { userInfo } from 'node:os';
import { operationScopes, scopes as SCOPES } from '../../generated/security';
import type { Sql } from '../../src/store/database/db';
import { type KeyChange, KeyCommandError, type KeyListing, createKey, listKeys, revokeKey, rotateKey } from '../../src/store/keys/admin';
import { displayPrefix } from '../../src/store/keys/format';
import { type CommandOptions, UsageError, runOperatorTool, table } from '../lib/command';
import { runTool } from '../lib/tool';

const USAGE = `npm run keys -- <command> [options]

  create --client NAME --scopes SCOPES [--expires DURATION] [--note TEXT]
                  a new key for the client (made when it is new); the key is printed once
  list [--client NAME]
                  every key: id, client, scopes, expiry, last use and state; never a secret
  rotate ID [--grace DURATION] [--expires DURATION]
                  a successor with the same client and scopes, printed once; the old key keeps
                  working for the grace (default 24h), then is refused
  revoke ID       the key is refused by every instance within 1 s

  ID is a key's id or its prefix (asa_<id>), as list shows it. DURATION: 90d, 24h, 30m, 45s.
  SCOPES, comma-separated: ${SCOPES.map(
    (s) =>
      `${s} (${Object.entries(operationScopes)
        .flatMap(([op, reqs]) => (reqs.some((r) => (r as readonly string[]).includes(s)) ? [op] : []))
        .join(', ')})`,
  ).join(', ')}
  Every command: --actor NAME (recorded in the audit; default the OS user), --json, --timeout SECONDS
  (30: past it the command ends, and what it changed, if anything, is not known).
  Database: DATABASE_URL, or the embedded one of npm start.`;

const UNIT_SECONDS = { s: 1, m: 60, h: 3600, d: 86_400 } as const;

/** `90d`, `24h`, `30m`, `45s` (and `0` for none) in seconds, at most ten years. */
function parseDuration(text: string, what: string): number {
  if (text === '0') return 0;
  const [, amount, unit] = /^([0-9]{1,7})([smhd])$/.exec(text) ?? [];
  const seconds = Number(amount) * (UNIT_SECONDS[unit as keyof typeof UNIT_SECONDS] ?? Number.NaN);
  if (!Number.isFinite(seconds) || seconds > 3650 * 86_400)
    throw new UsageError(`${what} must be a duration such as 90d, 24h, 30m or 45s (at most 3650d), got ${JSON.stringify(text)}`);
  return seconds;
}

function parseScopes(text: string | undefined): string[] {
  if (text === undefined) throw new UsageError(`--scopes is required: one or more of ${SCOPES.join(', ')}, comma-separated`);
  const scopes = [...new Set(text.split(',').map((s) => s.trim()))];
  const unknown = scopes.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (unknown.length || scopes.length === 0)
    throw new UsageError(
      `--scopes must name scopes the contract defines (${SCOPES.join(', ')}); unknown: ${unknown.join(', ') || '(none given)'}`,
    );
  return scopes.sort();
}

const CLIENT_NAME = /^[a-z0-9][a-z0-9._-]{0,62}$/;

const when = (d: Date | null, never = 'never') => (d ? d.toISOString().replace(/\.\d{3}Z$/, 'Z') : never);
const stateOf = (k: KeyListing, now = Date.now()) =>
  k.revokedAt ? 'revoked' : k.expiresAt && k.expiresAt.getTime() <= now ? 'expired' : 'active';

const keysTable = (keys: KeyListing[]): string =>
  table([
    ['KEY', 'CLIENT', 'SCOPES', 'CREATED', 'EXPIRES', 'LAST USED', 'STATE', 'REPLACES', 'NOTE'],
    ...keys.map((k) => [
      k.prefix,
      k.client,
      k.scopes.join(','),
      when(k.createdAt),
      when(k.expiresAt),
      when(k.lastUsedAt),
      stateOf(k),
      k.replaces ? displayPrefix(k.replaces) : '',
      k.note ?? '',
    ]),
  ]);

/** The audit line of a change: who, when, what, never a secret. */
function logChange(change: KeyChange): void {
  const { actor, action, keyId, client, details } = change;
  const line = {
    level: 30,
    time: new Date().toISOString(),
    msg: `API key ${action}d`,
    actor,
    action,
    key: displayPrefix(keyId),
    client,
    ...details,
  };
  process.stderr.write(`${JSON.stringify(line)}\n`);
}

const listingJson = (k: KeyListing) => ({ ...k, state: stateOf(k) });

/** The command, its arguments checked before any database is opened: what to run on it. */
function commandOf(command: string, positional: string[], o: CommandOptions): (sql: Sql) => Promise<string> {
  const actor = (o.actor as string | undefined) ?? userInfo().username;
  const json = o.json === true;
  const idOf = () => {
    if (positional.length !== 1) throw new UsageError(`${command} takes one key id (npm run keys -- list shows them)`);
    return positional[0] as string;
  };
  if (command === 'create') {
    const client = o.client as string | undefined;
    if (client === undefined || !CLIENT_NAME.test(client))
      throw new UsageError('--client must name the client: 1 to 63 of a-z 0-9 . _ -, starting with a letter or digit');
    const scopes = parseScopes(o.scopes as string | undefined);
    const expiresInSeconds = o.expires === undefined ? undefined : parseDuration(o.expires as string, '--expires');
    const note = o.note as string | undefined;
    if (note !== undefined && note.length > 500) throw new UsageError('--note is at most 500 characters');
    return async (sql) => {
      const issued = await createKey(sql, { client, scopes, expiresInSeconds, note, actor });
      logChange(issued.change);
      if (json) return JSON.stringify({ key: issued.key, ...listingJson(issued.listing) });
      return `Created ${issued.listing.prefix} for client ${client} (scopes ${scopes.join(', ')}; expires ${when(issued.listing.expiresAt)}).\nThe key is shown this once; keep it in a secret store:\n\n  ${issued.key}\n`;
    };
  }
  if (command === 'rotate') {
    const graceSeconds = parseDuration((o.grace as string | undefined) ?? '24h', '--grace');
    const expiresInSeconds = o.expires === undefined ? undefined : parseDuration(o.expires as string, '--expires');
    const id = idOf();
    return async (sql) => {
      const rotated = await rotateKey(sql, { id, graceSeconds, expiresInSeconds, actor });
      logChange(rotated.change);
      if (json) return JSON.stringify({ key: rotated.key, ...listingJson(rotated.listing), old: listingJson(rotated.old) });
      return `Rotated ${rotated.old.prefix}: it keeps working until ${when(rotated.old.expiresAt)}.\nIts successor ${rotated.listing.prefix} (client ${rotated.listing.client}, scopes ${rotated.listing.scopes.join(', ')}; expires ${when(rotated.listing.expiresAt)}) is shown this once:\n\n  ${rotated.key}\n`;
    };
  }
  if (command === 'revoke') {
    const id = idOf();
    return async (sql) => {
      const { listing, change } = await revokeKey(sql, { id, actor });
      if (change) logChange(change);
      if (json) return JSON.stringify({ ...listingJson(listing), alreadyRevoked: change === undefined });
      return change
        ? `Revoked ${listing.prefix} (client ${listing.client}) at ${when(listing.revokedAt)}: every instance refuses it within 1 s.`
        : `${listing.prefix} was already revoked, at ${when(listing.revokedAt)}.`;
    };
  }
  if (command === 'list') {
    if (positional.length) throw new UsageError('list takes no key id (--client NAME narrows it)');
    return async (sql) => {
      const keys = await listKeys(sql, { client: o.client as string | undefined });
      if (json) return JSON.stringify(keys.map(listingJson));
      return keys.length ? keysTable(keys) : 'No managed keys yet (npm run keys -- create --client NAME --scopes pets:read).';
    };
  }
  throw new UsageError(`Unknown command ${JSON.stringify(command)}`);
}

runTool('keys failed', () =>
  runOperatorTool(
    {
      usage: USAGE,
      options: {
        client: { type: 'string' },
        scopes: { type: 'string' },
        expires: { type: 'string' },
        note: { type: 'string' },
        grace: { type: 'string' },
        actor: { type: 'string' },
        json: { type: 'boolean' },
      },
      commandOf,
      isCommandError: (err): err is Error => err instanceof KeyCommandError,
    },
    process.argv.slice(2),
  ),
);
