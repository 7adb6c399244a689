import type { Logger } from '../../ops/logger';
import { type Sql, onlyRow, withDeadline } from '../database/db';

/** A managed key as each serving process holds it: enough to authenticate a request with no query. */
export interface ApiKeyRecord {
  id: string;
  clientId: string;
  /** The client's name: what logs and metrics call the caller. */
  client: string;
  digest: Buffer;
  scopes: ReadonlySet<string>;
  /** Milliseconds since the epoch; undefined: never. */
  expiresAt: number | undefined;
  /** `expiresAt` as an HTTP date (the API-Key-Expiration header), made once. */
  expiresHeader: string | undefined;
  revoked: boolean;
}

/** What the registry knows of a key id: its record, that no such key exists, or that it cannot say (stale). */
export type KeyLookup = { state: 'found'; key: ApiKeyRecord } | { state: 'unknown' } | { state: 'stale' };

export interface KeyRegistry {
  /**
   * The key with this id, as of the last refresh. `stale` once that refresh started more than
   * `maxStaleMs` ago (the database could not be read since): a revocation may have been missed,
   * so the key must not be honoured. Answered from memory: no query.
   */
  lookup(id: string): KeyLookup;
  /** Notes a use of key `id`; its last use is written at most once a minute, off the request path. */
  used(id: string): void;
  /** Resolves once the keys have been read for the first time. */
  readonly ready: Promise<void>;
  /** The keys have been read at least once (until then every managed key is answered 503, and /readyz says `connecting`). */
  loaded(): boolean;
  /** Stops refreshing, after writing the last uses noted (within its deadline). */
  stop(): Promise<void>;
}

export interface KeyRegistryOptions {
  logger: Logger;
  /** Start-up's migration of the database: the first read waits for it (and is not logged as failed before it). */
  after?: Promise<unknown>;
  /** How often the revision is polled (default 250 ms). */
  refreshMs?: number;
  /** How old the last successful refresh may be before keys are not honoured (default 1 s): the bound on a revocation. */
  maxStaleMs?: number;
  /** A key's last use is written at most this often (default 60 s). */
  lastUseEveryMs?: number;
  /**
   * Where last uses are written (default: the registry's own connection). The service passes the request pool: a
   * write waits on a commit (a disk busy with creates) or on a row another transaction holds, and on the registry's
   * one connection the next refresh waited behind it until the keys went stale and were answered 503.
   */
  lastUseSql?: Sql;
}

/** The revocation bound: a key revoked at T is refused by every instance from T + 1 s (docs/operations.md, Keys). */
const KEY_MAX_STALE_MS = 1_000;

interface KeyRow {
  id: string;
  clientId: string;
  client: string;
  digest: Buffer;
  scopes: string;
  expiresAt: Date | null;
  revokedAt: Date | null;
}

/**
 * `bytes` copied into memory of their own. postgres.js parses a bytea into a small Buffer cut from Node's shared
 * 8 KiB pool; kept for as long as its key is (the process's life), each digest kept a whole slab alive: 8 KiB for
 * 32 bytes, +9 MiB in each worker over the soak's hour of key churn (docs/operations.md, "The soak").
 */
function ownCopy(bytes: Buffer): Buffer {
  const copy = Buffer.allocUnsafeSlow(bytes.length);
  bytes.copy(copy);
  return copy;
}

const recordOf = (row: KeyRow): ApiKeyRecord => ({
  id: row.id,
  clientId: row.clientId,
  client: row.client,
  digest: ownCopy(row.digest),
  scopes: new Set(row.scopes.split(' ')),
  expiresAt: row.expiresAt?.getTime(),
  expiresHeader: row.expiresAt?.toUTCString(),
  revoked: row.revokedAt !== null,
});

/**
 * Last uses: noted in memory per request, written after the registry's next refresh (beside the ones that follow), at most once
 * every `everyMs` per key from this process. Other instances write them too: the conditional
 * UPDATE writes a row at most once a minute whoever asks. A failed write is kept for the next.
 */
function lastUses(sql: Sql, everyMs: number, logger: Logger) {
  const writtenAt = new Map<string, number>();
  const pending = new Set<string>();
  /** The write under way, if any: one at a time, beside the refreshes, never in their way. */
  let writing: Promise<void> | undefined;
  let lastFailureLog = 0;
  const uses = {
    note: (id: string): void => {
      const now = Date.now();
      const last = writtenAt.get(id);
      if (last !== undefined && now - last < everyMs) return;
      writtenAt.set(id, now);
      pending.add(id);
    },
    write: async (): Promise<void> => {
      if (pending.size === 0) return;
      const ids = [...pending];
      pending.clear();
      try {
        await withDeadline(sql`
          UPDATE api_keys SET last_used_at = now()
          WHERE id IN ${sql(ids)} AND (last_used_at IS NULL OR last_used_at <= now() - interval '1 minute')`);
      } catch (err) {
        for (const id of ids) pending.add(id);
        throw err;
      }
    },
    /** Starts a write of the uses noted, unless one is under way; a failure is logged (at most every 10 s). */
    writeBeside: (): void => {
      writing ??= uses
        .write()
        .catch((err: unknown) => {
          if (Date.now() - lastFailureLog < 10_000) return;
          lastFailureLog = Date.now();
          logger.warn({ err }, 'API keys: writing the last uses failed; they are kept for the next try');
        })
        .finally(() => (writing = undefined));
    },
    /** Resolves once the write under way, if any, has ended. */
    written: async (): Promise<void> => {
      await writing;
    },
  };
  return uses;
}

/**
 * Every managed key, in memory, kept current by polling: each refresh reads the one-row
 * revision (a primary-key read), and only when it moved, the keys changed since (migration 0005
 * says why that misses none). Polling rather than LISTEN, which a transaction-mode pooler breaks.
 * Reads go to the primary, never a replica: a replica's lag would stretch the revocation bound.
 */
export function createKeyRegistry(
  sql: Sql,
  {
    logger,
    after = Promise.resolve(),
    refreshMs = 250,
    maxStaleMs = KEY_MAX_STALE_MS,
    lastUseEveryMs = 60_000,
    lastUseSql = sql,
  }: KeyRegistryOptions,
): KeyRegistry {
  const keys = new Map<string, ApiKeyRecord>();
  let seen = -1;
  /** When the last successful refresh started: everything committed before it is in `keys`. */
  let freshAsOf = Number.NEGATIVE_INFINITY;
  let loaded = false;
  const uses = lastUses(lastUseSql, lastUseEveryMs, logger);
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let lastFailureLog = 0;
  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => (markReady = resolve));

  const refresh = async () => {
    const started = Date.now();
    // The poll must end before the bound would lapse on its account; the next one starts after it.
    const deadline = started + Math.max(refreshMs, maxStaleMs - refreshMs);
    const { revision } = onlyRow(
      await withDeadline(sql<{ revision: number }[]>`SELECT revision FROM api_key_revision`, deadline),
      'api_key_revision',
    );
    if (revision !== seen) {
      // Revisions only grow: one below what was seen is another history (a database restored or
      // replaced under the process), read whole, and the keys it does not hold are forgotten.
      const whole = revision < seen;
      const rows = await withDeadline(
        sql<KeyRow[]>`
          SELECT k.id, k.client_id AS "clientId", c.name AS client, k.digest, k.scopes,
                 k.expires_at AS "expiresAt", k.revoked_at AS "revokedAt"
          FROM api_keys k JOIN api_clients c ON c.id = k.client_id
          WHERE k.revision > ${whole ? -1 : seen}`,
        deadline,
      );
      if (whole) {
        keys.clear();
        logger.warn(
          { revision, seen },
          'API keys: the key revision went back (the database was restored or replaced): every key read again',
        );
      }
      for (const row of rows) keys.set(row.id, recordOf(row));
      seen = revision;
    }
    freshAsOf = started;
    loaded = true;
    markReady();
  };

  const tick = async () => {
    const started = Date.now();
    try {
      await refresh();
      uses.writeBeside();
    } catch (err) {
      if (Date.now() - lastFailureLog >= 10_000) {
        lastFailureLog = Date.now();
        logger.warn(
          { err },
          `API keys: refreshing from the database failed; managed keys are refused with 503 once ${maxStaleMs} ms stale`,
        );
      }
    }
    if (!stopped) timer = setTimeout(() => void tick(), Math.max(0, refreshMs - (Date.now() - started)));
  };
  // A failed preparation stops the process: nothing to read then.
  after.then(
    () => {
      if (!stopped) void tick();
    },
    () => {},
  );

  return {
    ready,
    loaded: () => loaded,
    lookup(id) {
      if (Date.now() - freshAsOf > maxStaleMs) return { state: 'stale' };
      const key = keys.get(id);
      return key ? { state: 'found', key } : { state: 'unknown' };
    },
    used: uses.note,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await uses.written();
      await uses.write().catch((err: unknown) => logger.warn({ err }, 'API keys: the last uses could not be written'));
    },
  };
}
