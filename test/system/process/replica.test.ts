import { call, waitFor } from '../../support/load';
import { type Running, reapAll, startServer, stop } from '../../support/processes';
import { type Proxy, proxyTo } from '../../support/proxy';
import { type ThrowawayPostgres, createThrowawayPostgres, describeWithThrowawayPostgres } from '../../support/throwawayPostgres';

// Reads from a streaming replica (pg_basebackup -R from a throwaway primary), and what happens
// when it falls behind, stops or is out of reach: reads go to the primary, and no request fails.
// The service reaches the replica through a TCP proxy, which can hold its connections.
const KEY = 'replica-key-0123456789abcdef';
const json = { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' };
const MAX_LAG_MS = 500;

describeWithThrowawayPostgres('reads from a streaming replica', () => {
  let primary: ThrowawayPostgres;
  let replica: ThrowawayPostgres;
  let proxy: Proxy;
  let server: Running;
  const failures: { status: number; url: string }[] = [];

  beforeAll(async () => {
    primary = await createThrowawayPostgres();
    await primary.start();
    replica = await createThrowawayPostgres({ replicaOf: primary });
    await replica.start();
    proxy = await proxyTo(replica.url);
    server = await startServer({
      DATABASE_URL: primary.url,
      DATABASE_REPLICA_URL: proxy.url,
      DATABASE_REPLICA_MAX_LAG_MS: String(MAX_LAG_MS),
      API_KEYS: KEY,
    });
    await waitFor(async () => (await call(`${server.origin}/readyz`)).status === 200);
  }, 120_000);
  afterAll(async () => {
    // A server that did not exit cleanly shows why: its last output comes with the failure.
    if (server) {
      const code = await stop(server);
      expect({ code, output: code === 0 ? '' : server.output().slice(-6000) }).toEqual({ code: 0, output: '' });
    }
    reapAll();
    proxy?.close();
    await replica?.destroy();
    await primary?.destroy();
  }, 60_000);

  /** Every call of the test, its 5xx kept: none may happen, whatever the replica does. */
  const api = async (path: string, init: RequestInit = {}) => {
    const r = await call(`${server.baseUrl}${path}`, { ...init, headers: json });
    if (r.status >= 500 || r.status === 0) failures.push({ status: r.status, url: path });
    return r;
  };
  const create = (name: string) => api('/pets', { method: 'POST', body: JSON.stringify({ name, categoryId: 1 }) });
  const reads = async () => {
    const metrics = await (await fetch(`${server.origin}/metrics`)).text();
    const count = (serverName: string) =>
      Number(new RegExp(`animal_store_db_reads_total\\{server="${serverName}"\\} (\\d+)`).exec(metrics)?.[1] ?? 0);
    const lag = Number(/animal_store_db_replica_lag_milliseconds (-?\d+)/.exec(metrics)?.[1]);
    return { replica: count('replica'), primary: count('primary'), lag };
  };
  /** Reads until one is served where `where` says; returns the pets listed by the last one. */
  const listUntilServedBy = async (where: 'replica' | 'primary') => {
    let body: { name: string }[] = [];
    await waitFor(
      async () => {
        const before = await reads();
        body = (await api('/pets?limit=100')).body as { name: string }[];
        const after = await reads();
        return after[where] > before[where];
      },
      { timeoutMs: 15_000, everyMs: 50 },
    );
    return body.map((p) => p.name);
  };

  test('when the replica keeps up, then listPets and getPet are served by it, and a create is answered by the primary', async () => {
    const created = await create('Written to the primary');
    expect(created.status).toBe(201);
    // A create's own response never depends on the replica.
    expect(created.body).toMatchObject({ name: 'Written to the primary' });
    // The replica has replayed the primary's WAL up to the create's commit (and the migrations before
    // it: on a busy machine it may not have replayed even those when the service is ready), so it holds it.
    const committed = (await primary.psql('SELECT pg_current_wal_lsn()')).trim();
    await waitFor(async () => (await replica.psql(`SELECT pg_last_wal_replay_lsn() >= '${committed}'::pg_lsn`)) === 't\n');
    expect(await replica.psql("SELECT count(*) FROM pets WHERE name = 'Written to the primary'")).toBe('1\n');
    expect(await listUntilServedBy('replica')).toContain('Written to the primary');
    const before = await reads();
    expect((await api(`/pets/${created.body.id}`)).body).toEqual(created.body);
    expect((await reads()).replica).toBe(before.replica + 1);
  }, 60_000);

  test('when replay on the replica is paused and the primary moves on, then reads go to the primary within the lag limit, and back once it catches up', async () => {
    await replica.psql('SELECT pg_wal_replay_pause()');
    try {
      const created = await create('While the replica is paused');
      expect(created.status).toBe(201);
      // Past DATABASE_REPLICA_MAX_LAG_MS, the primary serves (reads until one is): the new animal is listed.
      expect(await listUntilServedBy('primary')).toContain('While the replica is paused');
      expect((await reads()).lag).toBeGreaterThan(MAX_LAG_MS);
    } finally {
      await replica.psql('SELECT pg_wal_replay_resume()');
    }
    expect(await listUntilServedBy('replica')).toContain('While the replica is paused');
  }, 60_000);

  test('when the replica stops, then reads go to the primary without a failed request, and back to it once it is started again', async () => {
    // Reads running while it stops: none may fail.
    let running = true;
    const background = (async () => {
      while (running) await api('/pets?limit=5');
    })();
    let down = false;
    try {
      await replica.stop();
      down = true;
      expect(await listUntilServedBy('primary')).toEqual(expect.any(Array));
      expect((await reads()).lag).toBe(-1);
      await create('While the replica is down');
      await replica.start();
      down = false;
      expect(await listUntilServedBy('replica')).toContain('While the replica is down');
    } finally {
      running = false;
      await background;
      // Up again for the next case, whatever failed here.
      if (down) await replica.start();
    }
  }, 90_000);

  test('when the replica was out of reach while the primary moved on, then it serves again only once it has replayed what it missed', async () => {
    await replica.psql('SELECT pg_wal_replay_pause()');
    try {
      proxy.freeze();
      await waitFor(async () => (await reads()).lag === -1);
      const created = await create('While the replica was out of reach');
      expect(created.status).toBe(201);
      await new Promise((r) => setTimeout(r, MAX_LAG_MS + 300));
      proxy.thaw();
      await waitFor(async () => (await reads()).lag !== -1);
      // Answering again, but without the animal (its replay is paused): behind by the time since it was created.
      expect((await reads()).lag).toBeGreaterThan(MAX_LAG_MS);
      expect(await listUntilServedBy('primary')).toContain('While the replica was out of reach');
    } finally {
      proxy.thaw();
      await replica.psql('SELECT pg_wal_replay_resume()');
    }
    expect(await listUntilServedBy('replica')).toContain('While the replica was out of reach');
  }, 60_000);

  afterAll(() => {
    expect(failures).toEqual([]);
  });
});
