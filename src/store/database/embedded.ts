import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { RANDOM_PAGE_COST } from './db';

export interface EmbeddedPostgres {
  url: string;
  stop(): Promise<void>;
}

/** Where a serving process says on which port its embedded PostgreSQL listens (beside the data directory). */
const urlFileOf = (dataDir: string) => `${dataDir}.url`;

/**
 * PostgreSQL compiled to WebAssembly (PGlite), served on a loopback port so that the
 * same postgres.js code talks to it as to a real server. `dataDir` undefined: in memory.
 * With a data directory, its URL is written beside it while it runs, so that a tool
 * (`npm run keys`) can reach the database of a running `npm start` (runningEmbeddedUrl).
 */
export async function startEmbeddedPostgres(dataDir?: string): Promise<EmbeddedPostgres> {
  // Development dependencies: a production install (--omit=dev) has none, and names its server.
  const [{ PGlite }, { PGLiteSocketServer }] = await Promise.all([
    import('@electric-sql/pglite'),
    import('@electric-sql/pglite-socket'),
  ]).catch((err: unknown) => {
    throw new Error('DATABASE_URL is unset and the embedded PostgreSQL (a development dependency) is not installed: set DATABASE_URL', {
      cause: err,
    });
  });
  if (dataDir !== undefined) mkdirSync(dataDir, { recursive: true });
  const db = await PGlite.create(dataDir);
  // One session serves every connection, and takes no startup parameter: the planner's setting a server session is
  // started with (connect) is set on it here, so that the same statements get the same plans.
  await db.exec(`SET random_page_cost = ${RANDOM_PAGE_COST}`);
  // Several connections take turns: the server's queue serves one connection's transaction to its end.
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 4 });
  await server.start();
  // getServerConn() reports the port the OS chose for port 0, as host:port.
  const url = `postgres://postgres@${server.getServerConn()}/postgres`;
  if (dataDir !== undefined) writeFileSync(urlFileOf(dataDir), `${JSON.stringify({ url, pid: process.pid })}\n`);
  return {
    url,
    async stop() {
      if (dataDir !== undefined) rmSync(urlFileOf(dataDir), { force: true });
      await server.stop();
      await db.close();
    },
  };
}

/** The URL of the embedded PostgreSQL a running process serves from `dataDir`, if one does. */
export function runningEmbeddedUrl(dataDir: string): string | undefined {
  let running: { url?: unknown; pid?: unknown };
  try {
    running = JSON.parse(readFileSync(urlFileOf(dataDir), 'utf8')) as typeof running;
  } catch {
    return undefined;
  }
  if (typeof running.url !== 'string' || typeof running.pid !== 'number') return undefined;
  try {
    // Signal 0 sends nothing: it asks whether the process is there.
    process.kill(running.pid, 0);
    return running.url;
  } catch {
    return undefined;
  }
}
