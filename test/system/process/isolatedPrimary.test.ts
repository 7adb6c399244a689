import { call, waitFor } from '../../support/load';
import { type Running, reapAll, startServer, stop } from '../../support/processes';
import { type ThrowawayPostgres, createThrowawayPostgres, describeWithThrowawayPostgres } from '../../support/throwawayPostgres';

/*
 * A primary whose synchronous standby was promoted in its place, itself still running: what a primary
 * cut off from its failover engine is until the engine demotes it (pg_auto_failover does it through
 * the node's keeper, which may be the part that is cut off). The promoted server takes writes the old
 * one never sees, so a read the old one answered would be wrong: a 404 for an animal created, a page
 * without it. Every read there is a 503 instead (serving_primary(), migration 10: synchronous standbys
 * configured, none streaming), so is a create, refused before its COMMIT and never stored, and /readyz
 * says database_failover; once the old primary is stopped,
 * the service follows the promoted one and finds the animal. Repeated on a fresh pair: a recovery is
 * proven by repeating the fault.
 */
const KEY = 'isolated-primary-key-0123456789abcdef';
const headers = { Authorization: `Bearer ${KEY}` };
const DEADLINE_MS = 5_000;

describeWithThrowawayPostgres('a primary a standby was promoted over', () => {
  afterAll(() => reapAll());

  test.each([1, 2])(
    'when its synchronous standby is promoted and written to, then it answers no read (503, never a 404 or a page without the animal), and the service follows the promoted server once it is stopped (run %i of 2)',
    async () => {
      const primary = await createThrowawayPostgres();
      let standby: ThrowawayPostgres | undefined;
      let server: Running | undefined;
      try {
        await primary.start();
        await primary.psql("ALTER SYSTEM SET synchronous_standby_names = '*'");
        await primary.psql('SELECT pg_reload_conf()');
        standby = await createThrowawayPostgres({ replicaOf: primary });
        await standby.start();
        const promoted = standby;
        // A user without pg_read_all_stats, made while a standby still takes the primary's commits.
        await primary.psql('CREATE ROLE unprivileged');
        await waitFor(
          async () => (await primary.psql("SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync'")).trim() === '1',
          {
            timeoutMs: 30_000,
          },
        );
        server = await startServer({
          DATABASE_URL: `postgres://postgres@127.0.0.1:${primary.port},127.0.0.1:${promoted.port}/postgres?target_session_attrs=primary`,
          API_KEYS: KEY,
          RATE_LIMIT: 'off',
        });
        const origin = server.origin;
        const baseUrl = server.baseUrl;
        await waitFor(async () => (await call(`${origin}/readyz`)).status === 200, { timeoutMs: 30_000 });
        const before = await call(`${baseUrl}/pets`, {
          method: 'POST',
          headers: { ...headers, 'Content-Type': 'application/json' },
          body: JSON.stringify({ name: 'Created before', categoryId: 1 }),
        });
        expect(before.status).toBe(201);
        expect((await call(`${baseUrl}/pets/${before.body.id}`, { headers })).status).toBe(200);
        // The standby has synchronous_standby_names too (pg_basebackup copied it) and no standby of its own: being in
        // recovery, it passes (reads routed to a replica are judged by its lag, not here), once migration 10 reached it.
        await waitFor(async () => (await promoted.psql('SELECT serving_primary()').catch(() => '')).trim() === 't', { timeoutMs: 30_000 });

        // The standby promoted (its replication stops first, as a failover engine's promotion does), and an animal
        // created on it: another instance of the service, already on the promoted server, would have answered 201.
        await promoted.psql('SELECT pg_promote()');
        // It has no standby of its own yet: it takes writes alone (pg_basebackup copied the primary's setting).
        await promoted.psql('ALTER SYSTEM RESET synchronous_standby_names');
        await promoted.psql('SELECT pg_reload_conf()');
        const afterId = Number(
          (
            await promoted.psql(
              "INSERT INTO pets (name, category_id, status) VALUES ('Created on the promoted server', 2, 'available') RETURNING id",
            )
          ).split('\n')[0],
        );
        expect(afterId).toBeGreaterThan(before.body.id);

        // Every read through the service now: a 503 within the deadline, never an answer from the old primary's data.
        const reads = [`/pets/${afterId}`, `/pets/${before.body.id}`, '/pets?limit=100', `/pets?limit=100&status=available`];
        for (let round = 0; round < 3; round++)
          for (const path of reads) {
            const sentAt = Date.now();
            const r = await call(`${baseUrl}${path}`, { headers }, DEADLINE_MS + 2_000);
            expect({ path, status: r.status, code: r.body?.code, took: Date.now() - sentAt <= DEADLINE_MS + 500 }).toEqual({
              path,
              status: 503,
              code: 'service_unavailable',
              took: true,
            });
            expect(r.headers?.get('retry-after')).toBe('1');
          }
        // A create there is refused before its COMMIT (which would wait for a standby that is gone): a 503, and nothing stored.
        const sentAt = Date.now();
        const refused = await call(
          `${baseUrl}/pets`,
          {
            method: 'POST',
            headers: { ...headers, 'Content-Type': 'application/json' },
            body: JSON.stringify({ name: 'Refused', categoryId: 3 }),
          },
          DEADLINE_MS + 2_000,
        );
        expect({ status: refused.status, took: Date.now() - sentAt <= DEADLINE_MS + 500 }).toEqual({ status: 503, took: true });
        expect((await primary.psql("SELECT count(*) FROM pets WHERE name = 'Refused'")).trim()).toBe('0');
        // A user who may not read the standbys' state (no pg_read_all_stats) cannot tell, and passes; the superuser is refused.
        expect((await primary.psql('SET ROLE unprivileged; SELECT serving_primary()')).trim().split('\n')).toEqual(['SET', 't']);
        expect(await primary.psql('SELECT serving_primary()').catch((err: Error) => err.message)).toMatch(/none is streaming from it/);
        const ready = await call(`${origin}/readyz`);
        expect([ready.status, String(ready.body?.message).split(' (')[0]]).toEqual([503, 'Not ready: database_failover']);

        // The old primary stopped, as the failover engine demotes it: the service finds the promoted server.
        await primary.stop('fast');
        await waitFor(async () => (await call(`${baseUrl}/pets/${afterId}`, { headers })).status === 200, { timeoutMs: 10_000 });
        const page = await call(`${baseUrl}/pets?limit=100`, { headers });
        expect(page.status).toBe(200);
        expect(page.body.map((a: { id: number }) => a.id)).toEqual(expect.arrayContaining([before.body.id, afterId]));
        expect((await call(`${origin}/readyz`)).status).toBe(200);
        const after = await call(`${baseUrl}/pets`, {
          method: 'POST',
          headers: { ...headers, 'Content-Type': 'application/json' },
          body: JSON.stringify({ name: 'Created after', categoryId: 1 }),
        });
        expect(after.status).toBe(201);
        expect((await promoted.psql(`SELECT name FROM pets WHERE id = ${after.body.id}`)).trim()).toBe('Created after');
      } finally {
        if (server) await stop(server);
        await standby?.destroy();
        await primary.destroy();
      }
    },
    180_000,
  );
});
