import { createApp } from '../../../src/app';
import { connect } from '../../../src/store/database/db';
import { withStores } from '../../../src/handlers';
import { createStores } from '../../../src/store';
import { readMigrations } from '../../../src/store/database/migrate';
import { API_KEY, captureLogs, contractClient, testAppForFile, specOfFile, checkerOfFile } from '../../support/harness';

const t = testAppForFile();

describe('probes: GET /healthz and GET /readyz, at the root and under /v1, without a key', () => {
  test('when the process is up, then /healthz answers 200', async () => {
    const res = await t.api.get('/healthz').expect(200);
    expect(res.body).toEqual({ status: 'ok' });
  });

  test('when the database answers and every migration is applied, then /readyz answers 200', async () => {
    const res = await t.api.get('/readyz').expect(200);
    expect(res.body).toEqual({ status: 'ready', migration: readMigrations().length });
  });

  test('readyz: when the database is behind this build, then 503 names the pending migrations', async () => {
    const m = readMigrations().at(-1)!;
    await t.sql`DELETE FROM schema_migrations WHERE version = ${m.version}`;
    try {
      const res = await t.api.get('/readyz').expect(503);
      expect(res.body).toEqual({
        code: 'service_unavailable',
        message: `Not ready: migrations_pending (the database is at ${m.version - 1}, this build needs ${m.version})`,
        status: 503,
      });
      expect(res.headers['retry-after']).toBe('1');
    } finally {
      await t.sql`INSERT INTO schema_migrations (version, name, checksum) VALUES (${m.version}, ${m.name}, ${m.checksum})`;
    }
  });

  test('readyz: when the database is unreachable, then 503, while healthz still says ok', async () => {
    const spec = await specOfFile();
    const sql = connect('postgres://postgres@127.0.0.1:1/none', { max: 1 });
    try {
      const app = await createApp({
        spec,
        bootstrapKeys: [API_KEY],
        handlers: withStores(createStores(sql, { idempotencyTtlSeconds: 86_400 })),
        logging: captureLogs('silent').logging,
      });
      const api = contractClient(app, await checkerOfFile());
      await api.get('/readyz').expect(503);
      await api.get('/healthz').expect(200);
    } finally {
      await sql.end();
    }
  });

  test('when a client generated from the spec calls the probes under /v1 (its base URL), then they answer as at the root, without a key', async () => {
    expect((await t.api.get('/v1/healthz').expect(200)).body).toEqual({ status: 'ok' });
    expect((await t.api.get('/v1/readyz').expect(200)).body).toEqual({ status: 'ready', migration: readMigrations().length });
    // A wrong key changes nothing: the probes ask for none.
    await t.api.get('/v1/healthz').set('Authorization', 'Bearer not-a-key-0123456789').expect(200);
  });

  test('when the probes are asked for with the wrong method, at the root or under /v1, then 405 with Allow, without a key', async () => {
    for (const path of ['/healthz', '/v1/healthz', '/readyz', '/v1/readyz']) {
      const res = await t.api.post(path).expect(405);
      expect([path, res.headers.allow, res.body.message]).toEqual([
        path,
        'GET, HEAD, OPTIONS',
        'POST is not allowed here; allowed: GET, HEAD, OPTIONS',
      ]);
    }
  });

  test('when a path beside the probes under /v1 is asked for without a key, then 401 as everywhere else under /v1', async () => {
    for (const path of ['/v1/healthz/x', '/v1/healthzz', '/v1/HEALTHZ', '/v1/readyz/']) await t.api.get(path).expect(401);
  });
});
