import { loadConfig } from '../../src/config';
import { type Sql, connect } from '../../src/store/database/db';
import { type EmbeddedPostgres, runningEmbeddedUrl, startEmbeddedPostgres } from '../../src/store/database/embedded';
import { migrate } from '../../src/store/database/migrate';

/**
 * The tool's connection to DATABASE_URL (one, pooled as DATABASE_POOL_MODE says), or undefined
 * after saying on stderr that it is not set and `why` it is needed. Read through the service's
 * configuration, so that a tool refuses what the service would.
 */
export function connectToDatabaseUrl(why: string): Sql | undefined {
  const { databaseUrl, databasePoolMode } = loadConfig(process.env);
  if (databaseUrl === undefined) {
    process.stderr.write(`DATABASE_URL is not set: ${why}\n`);
    return undefined;
  }
  return connect(databaseUrl, { max: 1, poolMode: databasePoolMode });
}

/** DATABASE_URL, for a tool that makes and drops a database of its own there; undefined (said on stderr) when it is not set. */
export function scratchServerUrl(tool: string): string | undefined {
  const url = process.env.DATABASE_URL;
  if (!url) process.stderr.write(`${tool}: set DATABASE_URL to a PostgreSQL server (a database of its own is made and dropped there)\n`);
  return url;
}

/** The service's database, opened for a tool; `close` ends its connection (`timeout`: seconds its queries get, default all they need). */
export interface ServiceDatabase {
  sql: Sql;
  close(options?: { timeout?: number }): Promise<void>;
}

/** The database: DATABASE_URL's; else a running npm start's embedded one; else its data directory, opened here. */
export async function openServiceDatabase(): Promise<ServiceDatabase> {
  const config = loadConfig(process.env);
  let embedded: EmbeddedPostgres | undefined;
  let url = config.databaseUrl ?? runningEmbeddedUrl(config.pgliteDataDir);
  if (url === undefined) {
    embedded = await startEmbeddedPostgres(config.pgliteDataDir);
    url = embedded.url;
  }
  const sql = connect(url, { max: 1, poolMode: config.databaseUrl ? config.databasePoolMode : 'session' });
  // The same migrations start-up applies: the tables a tool works on are there before its first change.
  await migrate(sql);
  return {
    sql,
    close: async ({ timeout }: { timeout?: number } = {}) => {
      await sql.end(timeout === undefined ? undefined : { timeout });
      await embedded?.stop();
    },
  };
}
