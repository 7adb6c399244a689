import { connect } from '../../../src/store/database/db';
import { createKey, revokeKey } from '../../../src/store/keys/admin';
import { createKeyRegistry } from '../../../src/store/keys/registry';
import { migrate } from '../../../src/store/database/migrate';
import { type TestDatabase, freshDatabase } from '../../support/databases';
import { captureLogs } from '../../support/harness';

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
