import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { bootstrapClientId } from '../../../src/http/auth';
import { type Sql, connect } from '../../../src/store/database/db';
import { migrate, readMigrations } from '../../../src/store/database/migrate';
import { type TestDatabase, freshDatabase } from '../../support/databases';

let db: TestDatabase;
let sql: Sql;
beforeEach(async () => {
  db = await freshDatabase();
  sql = connect(db.url, { max: db.max });
});
afterEach(async () => {
  await sql.end();
  await db.drop();
});

const tables = async () =>
  (
    await sql<{ table_name: string }[]>`
    SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY table_name`
  ).map((r) => r.table_name);

describe('migrations', () => {
  test('when the database is empty, then every migration is applied once and recorded', async () => {
    const all = readMigrations();
    expect(await migrate(sql)).toEqual(all.map((m) => m.version));
    expect(await tables()).toEqual([
      'api_clients',
      'api_key_audit',
      'api_key_revision',
      'api_keys',
      'idempotency_keys',
      'pets',
      'rate_limit_counts',
      'schema_migrations',
      'signing_keys',
      'webhook_attempts',
      'webhook_deliveries',
      'webhook_endpoints',
      'webhook_events',
    ]);
    const recorded = await sql`SELECT version, name, checksum FROM schema_migrations ORDER BY version`;
    expect(recorded.map((r) => ({ ...r }))).toEqual(all.map(({ version, name, checksum }) => ({ version, name, checksum })));
  });

  test('when records made under API_KEYS (owned by the key) exist before the keys migration, then they belong to the client of that key after it', async () => {
    const before = readMigrations().filter((m) => m.version < 5);
    await migrate(sql, before);
    const digest = createHash('sha256').update('an-api-keys-key-0123456789').digest('hex');
    await sql`
      INSERT INTO idempotency_keys (owner, key, fingerprint, status, response, expires_at)
      VALUES (${digest}, 'k-1', 'f', 201, '{}', now() + interval '1 hour')`;
    await sql`INSERT INTO rate_limit_counts (owner, window_start, count) VALUES (${digest}, 60, 7)`;
    // Every migration from the keys' (5) on, as the folder holds them.
    const after = readMigrations()
      .map((m) => m.version)
      .filter((v) => v >= 5);
    expect(after.slice(0, 5)).toEqual([5, 6, 7, 8, 9]);
    expect(await migrate(sql)).toEqual(after);
    const client = bootstrapClientId('an-api-keys-key-0123456789');
    expect(await sql`SELECT client_id, key FROM idempotency_keys`).toEqual([{ client_id: client, key: 'k-1' }]);
    expect(await sql`SELECT client_id, count FROM rate_limit_counts`).toEqual([{ client_id: client, count: 7 }]);
  });

  test('when they are applied again, then nothing changes', async () => {
    await migrate(sql);
    expect(await migrate(sql)).toEqual([]);
  });

  test('when two instances start at once, then the migrations are applied exactly once', async () => {
    const other = connect(db.url, { max: 1 });
    try {
      const results = await Promise.all([migrate(sql), migrate(other)]);
      expect(results.flat().sort((a, b) => a - b)).toEqual(readMigrations().map((m) => m.version));
    } finally {
      await other.end();
    }
  });

  test('when an applied migration was edited since, then start-up is refused', async () => {
    await migrate(sql);
    const edited = readMigrations().map((m, i) => (i === 0 ? { ...m, checksum: 'changed' } : m));
    await expect(migrate(sql, edited)).rejects.toThrow(
      'Migration 1 (create_pets) was edited after it was applied; add a new migration instead',
    );
  });

  test('when the database has a migration this code does not know, then start-up is refused', async () => {
    await migrate(sql);
    await sql`INSERT INTO schema_migrations (version, name, checksum) VALUES (999, 'future', 'x')`;
    await expect(migrate(sql)).rejects.toThrow('The database has migration 999, which this code does not know');
  });

  test('when a migration fails, then none of the batch is applied', async () => {
    const broken = [
      ...readMigrations(),
      { version: 2, name: 'broken', sql: 'CREATE TABLE extra (id int); SELECT no_such_function();', checksum: 'b' },
    ];
    await expect(migrate(sql, broken)).rejects.toThrow(/no_such_function/);
    expect(await tables()).toEqual([]);
  });

  test('when migration files have gaps or other names, then they are refused', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'migrations-'));
    writeFileSync(path.join(dir, '0001_a.sql'), 'SELECT 1');
    writeFileSync(path.join(dir, '0003_c.sql'), 'SELECT 1');
    expect(() => readMigrations(dir)).toThrow('Migrations must be numbered 1, 2, 3 … without gaps; found 3 at position 2');
    writeFileSync(path.join(dir, '0002 B.sql'), 'SELECT 1');
    expect(() => readMigrations(dir)).toThrow('Migration file name must be NNNN_name.sql: 0002 B.sql');
  });

  test('when rows break the contract, then the pets table refuses them too: status values, name length, required columns', async () => {
    await migrate(sql);
    await expect(sql`INSERT INTO pets (name, category_id, status) VALUES ('x', 1, 'lost')`).rejects.toThrow(/check constraint/);
    await expect(sql`INSERT INTO pets (name, category_id) VALUES (${'n'.repeat(201)}, 1)`).rejects.toThrow(/check constraint/);
    await expect(sql`INSERT INTO pets (name, category_id) VALUES ('', 1)`).rejects.toThrow(/check constraint/);
    await expect(sql`INSERT INTO pets (name) VALUES ('x')`).rejects.toThrow(/null value/);
    await expect(sql`INSERT INTO pets (id, name, category_id) VALUES (5, 'x', 1)`).rejects.toThrow(/non-DEFAULT value into column "id"/);
    const rows = await sql`INSERT INTO pets (name, category_id) VALUES ('x', 1) RETURNING status`;
    expect(rows.map((r) => r.status)).toEqual(['available']);
  });
});
