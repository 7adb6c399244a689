import { createAutoFailover, describeWithAutoFailover } from '../../support/autoFailover';
import { call, waitFor } from '../../support/load';
import { type Running, reapAll, startServer, stop } from '../../support/processes';

/*
 * The old primary cut off from pg_auto_failover's monitor (its pg_autoctl stopped with SIGSTOP, its PostgreSQL
 * running, not in recovery and first in DATABASE_URL) while the monitor promotes its standby all the same, and an
 * animal created on the promoted node: the old primary answers no read and takes no create (serving_primary(),
 * migration 10), until its keeper, back, demotes it; then the service finds the animal on the promoted node. A
 * failover.test.ts run once answered a get of an acknowledged animal 404 this way (docs/performance-log.md).
 * FAILOVER_RUNS (1 unless set) repeats it.
 */
const KEY = 'keeper-cut-off-key-0123456789abcdef';
const DEADLINE_MS = 5_000;
/** A create waits at most its deadline, its COMMIT's grace and the resolution of a lost COMMIT (failover.test.ts). */
const CREATE_MS = 5_000 + 5_000 + 5_000;
/** Reads are back within this of the keeper's return (the docs' promise for a failover, docs/operations.md). */
const BACK_WITHIN_MS = 10_000;
const RUNS = Number(process.env.FAILOVER_RUNS ?? 1);

describeWithAutoFailover('the primary cut off from the failover engine (pg_auto_failover)', () => {
  afterAll(() => reapAll());

  const runs = Array.from({ length: RUNS }, (_, i) => (RUNS > 1 ? ` (run ${i + 1} of ${RUNS})` : ''));
  test.each(runs)(
    "when the primary's keeper is cut off and the monitor promotes its standby, then the old primary answers no read (503, never a 404) and takes no create, and the service follows the promoted node once the keeper demotes it%s",
    async () => {
      const cluster = await createAutoFailover();
      let server: Running | undefined;
      let resume: (() => void) | undefined;
      try {
        server = await startServer({ DATABASE_URL: cluster.url, API_KEYS: KEY, RATE_LIMIT: 'off' });
        const { origin, baseUrl } = server;
        const headers = { Authorization: `Bearer ${KEY}` };
        const post = (name: string) =>
          call(
            `${baseUrl}/pets`,
            { method: 'POST', headers: { ...headers, 'Content-Type': 'application/json' }, body: JSON.stringify({ name, categoryId: 1 }) },
            CREATE_MS + 1_000,
          );
        await waitFor(async () => (await call(`${origin}/readyz`)).status === 200, { timeoutMs: 30_000 });
        const old = (await cluster.primary())!;
        expect(old).toBeDefined();
        const before = await post('Created before');
        expect(before.status).toBe(201);

        resume = cluster.cutOffKeeper(old);
        await cluster.performFailover();
        const promoted = await cluster.promoted(old);
        await waitFor(() => cluster.acceptsWrites(promoted), { timeoutMs: 30_000 });
        const afterId = Number(
          (
            await cluster.psql(promoted, "INSERT INTO pets (name, category_id) VALUES ('Created on the promoted node', 2) RETURNING id")
          ).split('\n')[0],
        );

        // A read answered by the promoted node is right; one answered by the old primary would miss the animal.
        const answers: string[] = [];
        for (let round = 0; round < 3; round++)
          for (const path of [`/pets/${afterId}`, `/pets/${before.body.id}`, '/pets?limit=100']) {
            const r = await call(`${baseUrl}${path}`, { headers }, DEADLINE_MS + 2_000);
            const found = r.status === 200 && JSON.stringify(r.body).includes('Created on the promoted node');
            const right = r.status === 503 || (r.status === 200 && (path === `/pets/${before.body.id}` || found));
            if (!right || r.ms > DEADLINE_MS + 500) answers.push(`${path}: ${r.status} after ${r.ms} ms ${JSON.stringify(r.body)}`);
          }
        expect(answers).toEqual([]);
        const refused = await post('Refused on the old primary');
        expect([refused.status, refused.ms <= DEADLINE_MS + 500]).toEqual([503, true]);
        expect(await cluster.psql(old, "SELECT count(*) FROM pets WHERE name = 'Refused on the old primary'")).toBe('0');

        // The keeper back: it demotes its node, and the service follows the promoted one.
        const resumedAt = Date.now();
        resume();
        resume = undefined;
        await waitFor(async () => (await call(`${baseUrl}/pets/${afterId}`, { headers })).status === 200, { timeoutMs: BACK_WITHIN_MS });
        const back = Date.now() - resumedAt;
        const after = await post('Created after');
        expect(after.status).toBe(201);
        const settled = await cluster.settled(60_000);
        const stored = await cluster.psql(
          settled,
          `SELECT string_agg(name, ',' ORDER BY id) FROM pets WHERE id IN (${before.body.id}, ${afterId}, ${after.body.id})`,
        );
        process.stdout.write(
          `failover (keeper cut off): ${JSON.stringify({ newPrimary: `${old.name} → ${promoted.name}`, readsBackAfterResumeMs: back, stored })}\n`,
        );
        expect(stored).toBe('Created before,Created on the promoted node,Created after');
      } finally {
        resume?.();
        if (server) await stop(server);
        await cluster.destroy();
      }
    },
    240_000,
  );
});
