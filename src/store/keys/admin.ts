import type postgres from 'postgres';
import { type Sql, onlyRow, transaction } from '../database/db';
import { KEY_PREFIX, displayPrefix, mintKey, randomBase62 } from './format';

/**
 * An operator's operations on the API keys (`npm run keys`, scripts/keys/): each is one
 * transaction that takes the next revision first (migration 0005: that orders them for the
 * instances' refresh) and writes its row of api_key_audit. A secret is returned once, by create
 * and rotate, and stored nowhere.
 */

/** A key as `npm run keys -- list` shows it: never its secret, nor its digest. */
export interface KeyListing {
  id: string;
  /** `asa_<id>`: what a key's holder can match against the start of their key. */
  prefix: string;
  client: string;
  scopes: string[];
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
  /** The key this one succeeds (rotation). */
  replaces: string | null;
  note: string | null;
}

/** A change to the keys, as its audit row records it (and the command's log line says it). */
export interface KeyChange {
  actor: string;
  action: 'create' | 'rotate' | 'revoke';
  keyId: string;
  clientId: string;
  client: string;
  details: Record<string, unknown>;
}

export interface IssuedKey {
  /** The key's text: shown once, to the operator who made it. */
  key: string;
  listing: KeyListing;
  change: KeyChange;
}

/** A command the keys refuse, in words for the operator. */
export class KeyCommandError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KeyCommandError';
  }
}

type Tx = postgres.TransactionSql;

const nextRevision = async (tx: Tx): Promise<number> =>
  onlyRow(await tx<{ revision: number }[]>`UPDATE api_key_revision SET revision = revision + 1 RETURNING revision`, 'api_key_revision')
    .revision;

async function audit(tx: Tx, change: KeyChange): Promise<KeyChange> {
  // Sent as text and cast by the server: a parameter the driver is told is jsonb, it encodes as JSON once more.
  await tx`
    INSERT INTO api_key_audit (actor, action, key_id, client_id, details)
    VALUES (${change.actor}, ${change.action}, ${change.keyId}, ${change.clientId}, ${JSON.stringify(change.details)}::text::jsonb)`;
  return change;
}

type ListingRow = Omit<KeyListing, 'scopes'> & { scopes: string; clientId: string };

const listingQuery = (q: Sql | Tx) => q`
  SELECT k.id, k.prefix, k.client_id AS "clientId", c.name AS client, k.scopes, k.created_at AS "createdAt",
         k.expires_at AS "expiresAt", k.revoked_at AS "revokedAt", k.last_used_at AS "lastUsedAt", k.replaces, k.note
  FROM api_keys k JOIN api_clients c ON c.id = k.client_id`;

/** A key's row as this transaction sees it (one it made or changed). */
async function rowOf(tx: Tx, id: string): Promise<ListingRow> {
  return onlyRow(await tx<ListingRow[]>`${listingQuery(tx)} WHERE k.id = ${id}`, 'api_keys');
}

const listingOf = ({ clientId: _c, ...row }: ListingRow): KeyListing => ({ ...row, scopes: row.scopes.split(' ') });

/** The key named by its id or its display prefix (`asa_<id>`), locked for this transaction. */
async function lockedKey(tx: Tx, idOrPrefix: string): Promise<ListingRow> {
  const id = idOrPrefix.startsWith(KEY_PREFIX) ? idOrPrefix.slice(KEY_PREFIX.length) : idOrPrefix;
  const [row] = await tx<ListingRow[]>`${listingQuery(tx)} WHERE k.id = ${id} FOR UPDATE OF k`;
  if (!row) throw new KeyCommandError(`No API key has the id ${JSON.stringify(idOrPrefix)} (npm run keys -- list shows them)`);
  return row;
}

/** Inserts a new key; it expires `expiresInSeconds` from now (undefined: never). */
async function insertKey(
  tx: Tx,
  revision: number,
  key: { clientId: string; scopes: string[]; expiresInSeconds: number | undefined; note: string | null; replaces: string | null },
): Promise<{ text: string; row: ListingRow }> {
  const minted = mintKey();
  const seconds = key.expiresInSeconds ?? null;
  await tx`
    INSERT INTO api_keys (id, client_id, prefix, digest, scopes, note, expires_at, replaces, revision)
    VALUES (${minted.id}, ${key.clientId}, ${displayPrefix(minted.id)}, ${minted.digest}, ${key.scopes.join(' ')}, ${key.note},
            now() + make_interval(secs => ${seconds}::float8), ${key.replaces}, ${revision})`;
  return { text: minted.text, row: await rowOf(tx, minted.id) };
}

/** A new key for the client named `client`, which is made when it does not exist. */
export function createKey(
  sql: Sql,
  args: { client: string; scopes: string[]; expiresInSeconds?: number; note?: string; actor: string },
): Promise<IssuedKey> {
  return transaction(sql, async (tx) => {
    const revision = await nextRevision(tx);
    const { id: clientId } = onlyRow(
      await tx<{ id: string }[]>`
        INSERT INTO api_clients (id, name) VALUES (${`cl_${randomBase62(12)}`}, ${args.client})
        ON CONFLICT (name) DO UPDATE SET name = EXCLUDED.name
        RETURNING id`,
      'api_clients',
    );
    const { text, row } = await insertKey(tx, revision, {
      clientId,
      scopes: args.scopes,
      expiresInSeconds: args.expiresInSeconds,
      note: args.note ?? null,
      replaces: null,
    });
    const change = await audit(tx, {
      actor: args.actor,
      action: 'create',
      keyId: row.id,
      clientId,
      client: args.client,
      details: { scopes: args.scopes, expiresAt: row.expiresAt, note: row.note },
    });
    return { key: text, listing: listingOf(row), change };
  });
}

/**
 * A successor to key `id`: the same client and scopes, a new secret. The old key keeps working
 * for `graceSeconds` more (or until it expires, if that is sooner), then is refused. The successor
 * expires after `expiresInSeconds`, or by default after the lifetime the old key was given.
 */
export function rotateKey(
  sql: Sql,
  args: { id: string; graceSeconds: number; expiresInSeconds?: number; actor: string },
): Promise<IssuedKey & { old: KeyListing }> {
  return transaction(sql, async (tx) => {
    const revision = await nextRevision(tx);
    const old = await lockedKey(tx, args.id);
    if (old.revokedAt)
      throw new KeyCommandError(`${displayPrefix(old.id)} was revoked at ${old.revokedAt.toISOString()}: make a new key (create)`);
    const [{ expired, lifetime } = { expired: false, lifetime: null }] = await tx<{ expired: boolean; lifetime: number | null }[]>`
      SELECT coalesce(expires_at <= now(), false) AS expired, extract(epoch FROM expires_at - created_at)::float8 AS lifetime
      FROM api_keys WHERE id = ${old.id}`;
    if (expired) throw new KeyCommandError(`${displayPrefix(old.id)} has expired: make a new key (create)`);
    const { text, row } = await insertKey(tx, revision, {
      clientId: old.clientId,
      scopes: old.scopes.split(' '),
      expiresInSeconds: args.expiresInSeconds ?? lifetime ?? undefined,
      note: old.note,
      replaces: old.id,
    });
    await tx`
      UPDATE api_keys
      SET expires_at = least(coalesce(expires_at, 'infinity'), now() + make_interval(secs => ${args.graceSeconds}::float8)),
          revision = ${revision}
      WHERE id = ${old.id}`;
    const after = await rowOf(tx, old.id);
    const change = await audit(tx, {
      actor: args.actor,
      action: 'rotate',
      keyId: old.id,
      clientId: old.clientId,
      client: old.client,
      details: { successor: row.id, graceSeconds: args.graceSeconds, expiresAt: after.expiresAt, successorExpiresAt: row.expiresAt },
    });
    return { key: text, listing: listingOf(row), old: listingOf(after), change };
  });
}

/** Ends key `id` now. A key already revoked is left as it is (`change` undefined). */
export function revokeKey(sql: Sql, args: { id: string; actor: string }): Promise<{ listing: KeyListing; change: KeyChange | undefined }> {
  return transaction(sql, async (tx) => {
    const revision = await nextRevision(tx);
    const key = await lockedKey(tx, args.id);
    if (key.revokedAt) return { listing: listingOf(key), change: undefined };
    await tx`UPDATE api_keys SET revoked_at = now(), revision = ${revision} WHERE id = ${key.id}`;
    const after = await rowOf(tx, key.id);
    const change = await audit(tx, {
      actor: args.actor,
      action: 'revoke',
      keyId: key.id,
      clientId: key.clientId,
      client: key.client,
      details: { revokedAt: after.revokedAt },
    });
    return { listing: listingOf(after), change };
  });
}

/** Every key (of one client, when named), by client and then age: never a secret. */
export async function listKeys(sql: Sql, { client }: { client?: string } = {}): Promise<KeyListing[]> {
  const rows = await sql<ListingRow[]>`
    ${listingQuery(sql)}
    ${client === undefined ? sql`` : sql`WHERE c.name = ${client}`}
    ORDER BY c.name, k.created_at, k.id`;
  return rows.map(listingOf);
}
