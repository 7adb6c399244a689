import { type Sql, connect } from '../../../src/store/database/db';
import { createKey, revokeKey } from '../../../src/store/keys/admin';
import { migrate } from '../../../src/store/database/migrate';
import { call, waitFor } from '../../support/load';
import { type PgBouncer, pgbouncerUnavailable, startPgBouncer } from '../../support/pgbouncer';
import { type Running, reapAll, startServer, stop } from '../../support/processes';
import { type ThrowawayPostgres, createThrowawayPostgres, describeWithThrowawayPostgres } from '../../support/throwawayPostgres';

/*
 * A key revoked while two instances, each with two workers, serve creates and lists with it: from
 * 1 s after the revocation's commit, no instance and no worker serves anything it sends. Each
 * worker's request lines (its `worker` field) say what it answered and when; the client's own
 * record says when each request was sent and what came back. Directly on PostgreSQL, and through
 * PgBouncer in transaction mode, where LISTEN would not work (the instances poll).
 */
const BOUND_MS = 1_000;
const CONNECTIONS = 16;

interface Sent {
  sentAt: number;
  status: number;
  instance: number;
}

interface Line {
  time: string;
  worker?: number;
  apiKey?: string;
  res?: { statusCode: number };
}

const why = pgbouncerUnavailable();
if (why && process.env.REQUIRE_THROWAWAY_POSTGRES === '1') throw new Error(`the pooler case needs PgBouncer: ${why}`);

describeWithThrowawayPostgres('a managed key revoked under load', () => {
  let pg: ThrowawayPostgres;
  let sql: Sql;
  let bouncer: PgBouncer | undefined;
  beforeAll(async () => {
    pg = await createThrowawayPostgres();
    await pg.start();
    sql = connect(pg.url, { max: 2 });
    await migrate(sql);
    if (!why) bouncer = await startPgBouncer(pg.port, 'transaction', 8);
  }, 90_000);
  afterAll(async () => {
    reapAll();
    await sql?.end();
    await bouncer?.stop();
    await pg?.destroy();
  }, 60_000);

  /** Ready four times in a row, each on a new connection: the cluster hands new connections to its workers in turn. */
  async function readyOnEveryWorker(s: Running) {
    for (let i = 0, inARow = 0; inARow < 4; i++) {
      if (i > 200) throw new Error(`not ready:\n${s.output()}`);
      inARow = (await call(`${s.origin}/readyz`, { headers: { Connection: 'close' } })).status === 200 ? inARow + 1 : 0;
      if (inARow === 0) await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Two instances of two workers each on `env`, under create and list load with a key (and a control key); the key is revoked once both instances have served it, and the load goes on 2.5 s more. */
  async function revokeUnderLoad(env: Record<string, string>, label: string) {
    const revoked = await createKey(sql, { client: `${label}-revoked`, scopes: ['pets:read', 'pets:write'], actor: 'test' });
    const kept = await createKey(sql, { client: `${label}-kept`, scopes: ['pets:read', 'pets:write'], actor: 'test' });
    const serverEnv = { ...env, WEB_CONCURRENCY: '2', RATE_LIMIT: 'off', LOG_LEVEL: 'info', API_KEYS: 'bootstrap-key-0123456789' };
    const instances: Running[] = await Promise.all([startServer(serverEnv), startServer(serverEnv)]);
    try {
      for (const s of instances) await readyOnEveryWorker(s);
      const sent: Sent[] = [];
      const keptStatuses = new Map<number, number>();
      let committed = Number.POSITIVE_INFINITY;
      let end = Number.POSITIVE_INFINITY;
      const loop = async (i: number) => {
        for (let j = 0; Date.now() < end; j++) {
          const instance = (i + j) % 2;
          const base = (instances[instance] as Running).baseUrl;
          const useKept = j % 5 === 4;
          const headers = { Authorization: `Bearer ${useKept ? kept.key : revoked.key}`, 'Content-Type': 'application/json' };
          const sentAt = Date.now();
          const r =
            j % 2
              ? await call(`${base}/pets?limit=5`, { headers })
              : await call(`${base}/pets`, {
                  method: 'POST',
                  headers,
                  body: JSON.stringify({ name: `${label} ${i}-${j}`, categoryId: 1 }),
                });
          if (useKept) keptStatuses.set(r.status, (keptStatuses.get(r.status) ?? 0) + 1);
          else sent.push({ sentAt, status: r.status, instance });
        }
      };
      const load = Promise.all(Array.from({ length: CONNECTIONS }, (_, i) => loop(i)));
      // Revoked under load, whatever the machine's speed: once both instances have served the key (a create
      // and a list each) and more than 50 of its requests were sent over 100 ms ago (what the checks below
      // count as sent before the commit).
      const servedOn = (instance: number, status: number) => sent.some((x) => x.instance === instance && x.status === status);
      const sentBefore = (at: number) => sent.filter((x) => x.sentAt < at).length;
      await waitFor(() => Promise.resolve([0, 1].every((n) => servedOn(n, 200) && servedOn(n, 201)) && sentBefore(Date.now() - 150) > 50), {
        timeoutMs: 20_000,
      });
      await revokeKey(sql, { id: revoked.listing.id, actor: 'test' });
      committed = Date.now();
      end = committed + 2_500;
      await load;
      // Every request line is written before the processes stop (their logs are flushed on exit).
      for (const s of instances) expect(await stop(s)).toBe(0);

      const lines: (Line & { instance: number })[] = instances.flatMap((s, instance) =>
        s
          .output()
          .split('\n')
          .filter((l) => l.startsWith('{') && l.includes(revoked.listing.prefix))
          .map((l) => ({ ...(JSON.parse(l) as Line), instance })),
      );
      const served = (l: Line) => (l.res?.statusCode ?? 0) < 300;
      const perWorker = new Map<string, { lastServed: number; firstRefused: number }>();
      for (const l of lines) {
        const at = Date.parse(l.time);
        const id = `instance ${l.instance} worker ${l.worker}`;
        const w = perWorker.get(id) ?? { lastServed: 0, firstRefused: Number.POSITIVE_INFINITY };
        if (served(l)) w.lastServed = Math.max(w.lastServed, at);
        else if (l.res?.statusCode === 401 && at >= committed - 50) w.firstRefused = Math.min(w.firstRefused, at);
        perWorker.set(id, w);
      }
      const timings = Object.fromEntries(
        [...perWorker].map(([id, w]) => [id, { lastServedMs: w.lastServed - committed, firstRefusedMs: w.firstRefused - committed }]),
      );
      process.stdout.write(
        `${label}: ${sent.length} requests with the revoked key (${sent.filter((s) => s.sentAt > committed).length} after its commit), ${[...keptStatuses.values()].reduce((a, b) => a + b, 0)} with the other; ms from the commit, per worker: ${JSON.stringify(timings)}\n`,
      );
      return { sent, committed, perWorker, keptStatuses };
    } finally {
      for (const s of instances) if (s.child.exitCode === null) await stop(s);
    }
  }

  function expectRevokedEverywhere({ sent, committed, perWorker, keptStatuses }: Awaited<ReturnType<typeof revokeUnderLoad>>) {
    // Four workers served the key, and each refused it within the bound of the commit; none served it after.
    expect(perWorker.size).toBe(4);
    for (const [id, w] of perWorker) {
      expect({ id, servedBeforeCommit: w.lastServed > 0 }).toEqual({ id, servedBeforeCommit: true });
      expect({ id, lastServedAfterBound: w.lastServed > committed + BOUND_MS }).toEqual({ id, lastServedAfterBound: false });
      expect({ id, refusedWithinBound: w.firstRefused <= committed + BOUND_MS }).toEqual({ id, refusedWithinBound: true });
    }
    // What the client saw: before the commit, served; from the bound on, every request refused with 401, on both instances.
    const before = sent.filter((s) => s.sentAt < committed - 100);
    const after = sent.filter((s) => s.sentAt > committed + BOUND_MS);
    expect(before.length).toBeGreaterThan(50);
    expect(new Set(before.map((s) => s.status))).toEqual(new Set([200, 201]));
    expect(after.length).toBeGreaterThan(50);
    expect(new Set(after.map((s) => s.instance))).toEqual(new Set([0, 1]));
    expect([...new Set(after.map((s) => s.status))]).toEqual([401]);
    // The other key of the run was served throughout: the refreshes refused nothing else.
    expect([...keptStatuses.keys()].sort()).toEqual([200, 201]);
  }

  test('when a key is revoked while two instances of two workers serve it on PostgreSQL, then within 1 s of the commit every worker refuses it, and nothing it sends after is served', async () => {
    expectRevokedEverywhere(await revokeUnderLoad({ DATABASE_URL: pg.url }, 'direct'));
  }, 90_000);

  (why ? test.skip : test)(
    'when the same runs through PgBouncer in transaction mode (no LISTEN there), then every worker refuses the key within 1 s of the commit too',
    async () => {
      const url = (bouncer as PgBouncer).url;
      expectRevokedEverywhere(
        await revokeUnderLoad({ DATABASE_URL: url, DATABASE_POOL_MODE: 'transaction', DATABASE_POOL_SIZE: '10' }, 'pgbouncer'),
      );
    },
    90_000,
  );
});
