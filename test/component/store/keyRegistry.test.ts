import { connect } from '../../../src/store/database/db';
import { createKey, revokeKey } from '../../../src/store/keys/admin';
import { createKeyRegistry } from '../../../src/store/keys/registry';
import { migrate } from '../../../src/store/database/migrate';
import { type TestDatabase, freshDatabase } from '../../support/databases';
import { captureLogs, until } from '../../support/harness';

// What each process's registry of managed keys keeps in memory: every key of the database, for as long as the
// process runs (a revoked key too, to say so when it is presented). The hour's soak, which makes and rotates a key
// every 5 s, saw each worker's external memory grow by 9 MiB: each key's 32-byte digest was a slice of Node's shared
// 8 KiB Buffer pool, as postgres.js parses a bytea, and kept the whole slab alive.

let db: TestDatabase;
beforeAll(async () => {
  db = await freshDatabase();
  const sql = connect(db.url, { max: 1 });
  await migrate(sql);
  await sql.end();
});
afterAll(() => db.drop());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('when keys are made and revoked one at a time while requests allocate, then each key the registry holds keeps 32 bytes of digest, not a pool slab', async () => {
  const sql = connect(db.url, { max: 2 });
  const { logging } = captureLogs('silent');
  const registry = createKeyRegistry(sql, { logger: logging.logger, refreshMs: 10 });
  const kept: Buffer[] = [];
  try {
    await registry.ready;
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) {
      const { listing } = await createKey(sql, { client: `registry-memory-${i % 4}`, scopes: ['pets:read'], actor: 'test' });
      if (i % 2 === 1) await revokeKey(sql, { id: listing.id, actor: 'test' });
      ids.push(listing.id);
      // Between two refreshes a serving process allocates small Buffers (bodies, headers) from the same pool.
      for (let n = 0; n < 200; n++) kept.push(Buffer.from(`request ${n}`));
      for (const deadline = Date.now() + 5_000; registry.lookup(listing.id).state !== 'found' && Date.now() < deadline;) await sleep(10);
    }
    kept.length = 0;
    const held = ids.map((id) => {
      const found = registry.lookup(id);
      return found.state === 'found' ? { bytes: found.key.digest.length, memory: found.key.digest.buffer.byteLength } : found.state;
    });
    expect(held).toEqual(ids.map(() => ({ bytes: 32, memory: 32 })));
  } finally {
    await registry.stop();
    await sql.end();
  }
});

// CI's smoke bench answered 59 creates with a managed key 503 (the keys a second stale). A key's last use was written
// on the registry's one connection, and the next refresh waited on that connection behind it: a write that waits (on
// its commit, on a disk busy with creates; on a row another transaction holds) held the keys' freshness with it.
// Here the write waits on a row lock (seen in pg_stat_activity), and a key made meanwhile must still reach the
// registry. It needs a second session to hold the lock; the embedded PostgreSQL serves one at a time.
if (process.env.TEST_DB_MODE !== 'embedded')
  test("when a key's last use cannot be written (its row locked by another transaction), then the refreshes go on beside the write and the keys are never stale", async () => {
    const sql = connect(db.url, { max: 2 });
    const keysSql = connect(db.url, { max: 1 });
    const locker = connect(db.url, { max: 1 });
    const watcher = connect(db.url, { max: 1 });
    const { logging } = captureLogs('silent');
    const maxStaleMs = 300;
    const registry = createKeyRegistry(keysSql, { logger: logging.logger, refreshMs: 20, maxStaleMs, lastUseEveryMs: 0, lastUseSql: sql });
    let release: () => void = () => {};
    let locking: Promise<unknown> = Promise.resolve();
    try {
      await registry.ready;
      const { listing } = await createKey(sql, { client: 'registry-last-use', scopes: ['pets:read'], actor: 'test' });
      await until(() => registry.lookup(listing.id).state === 'found');
      const held = new Promise<void>((resolve) => (release = resolve));
      let locked: () => void = () => {};
      const lockTaken = new Promise<void>((resolve) => (locked = resolve));
      locking = locker.begin(async (tx) => {
        await tx`SELECT id FROM api_keys WHERE id = ${listing.id} FOR UPDATE`;
        locked();
        await held;
      });
      await lockTaken;
      registry.used(listing.id);
      await until(
        async () =>
          (
            await watcher`
            SELECT 1 FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%UPDATE api_keys SET last_used_at%'`
          ).length === 1,
      );
      const stale: string[] = [];
      const watch = setInterval(() => {
        if (registry.lookup(listing.id).state !== 'found') stale.push(new Date().toISOString());
      }, 10);
      try {
        // Longer than the staleness bound: the write still waits while the registry reads a key made after it.
        const waitingSince = Date.now();
        const { listing: later } = await createKey(sql, { client: 'registry-last-use', scopes: ['pets:read'], actor: 'test' });
        await until(() => registry.lookup(later.id).state === 'found' && Date.now() - waitingSince > 3 * maxStaleMs, 2_000);
      } finally {
        clearInterval(watch);
      }
      expect(stale).toEqual([]);
    } finally {
      release();
      await locking;
      await registry.stop();
      await Promise.all([sql.end(), keysSql.end(), locker.end(), watcher.end()]);
    }
  });
