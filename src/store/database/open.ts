import type { StatementHook } from '../../ops/tracing';
import { type PoolMode, type Sql, connect } from './db';
import { type EmbeddedPostgres, startEmbeddedPostgres } from './embedded';

/** Where a serving process's database is, and how it is pooled: DATABASE_URL and the variables beside it. */
export interface DatabaseOptions {
  /** DATABASE_URL; undefined: the embedded PostgreSQL (PGlite), with its data in `embeddedDataDir`. */
  url: string | undefined;
  embeddedDataDir: string;
  /** Connections per pool (the primary's, and the replica's). */
  poolSize: number;
  poolMode: PoolMode;
  /** DATABASE_REPLICA_URL: a streaming replica reads may go to. */
  replicaUrl: string | undefined;
  /** Tracing on: the statement hook of a pool on a URL (its spans name that server). */
  statements?: (url: string) => StatementHook;
}

/** A serving process's connections, opened in one place. */
export interface Database {
  /** The URL connected to: DATABASE_URL, or the embedded server's. */
  url: string;
  /** The embedded PostgreSQL, when DATABASE_URL is unset. */
  embedded: EmbeddedPostgres | undefined;
  /** The primary's pool: every write, and reads without a replica. */
  sql: Sql;
  /** The replica's pool, when DATABASE_REPLICA_URL is set. */
  replicaSql: Sql | undefined;
  /**
   * The key registry's connection, of its own: sharing the request pool behind a transaction-mode
   * pooler, a request could wait out its deadline on the connection of a statement cancelled through it.
   */
  keysSql: Sql;
  /** Ends every pool (within 1 s), then stops the embedded server. */
  close(): Promise<void>;
}

/** Opens the database: the embedded one when no URL is given (one session at a time: pools of 1), and every pool on it. */
export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  const embedded = options.url === undefined ? await startEmbeddedPostgres(options.embeddedDataDir) : undefined;
  const url = options.url ?? (embedded as EmbeddedPostgres).url;
  const pooled = { max: embedded ? 1 : options.poolSize, poolMode: embedded ? ('session' as const) : options.poolMode };
  const sql = connect(url, { ...pooled, statements: options.statements?.(url) });
  const { replicaUrl } = options;
  const replicaSql =
    replicaUrl === undefined ? undefined : connect(replicaUrl, { ...pooled, statements: options.statements?.(replicaUrl) });
  const keysSql = connect(url, { max: 1, poolMode: pooled.poolMode });
  return {
    url,
    embedded,
    sql,
    replicaSql,
    keysSql,
    async close() {
      await Promise.all([sql.end({ timeout: 1 }), replicaSql?.end({ timeout: 1 }), keysSql.end({ timeout: 1 })]);
      await embedded?.stop();
    },
  };
}
